import Foundation
import JSON

// The browser side of a login (Adobe Pass REST API V2, "Perform authentication in user agent"): the authenticate
// entry point, the mock MVPD login form, the SP's assertion consumer that saves the profile, and the MVPD logout page.
extension Emulator {
    /// A minimal HTML page.
    func page(title: String, body: String) -> String {
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>\(XML.escape(title))</title></head>\n<body>\n\(body)\n</body></html>\n"
    }

    /// `GET /api/v2/authenticate/{sp}/{code}`: 302 to the MVPD's login form, or 400 `text/html` when the code
    /// is unknown, expired, or its session still lacks the MVPD or the domain. A session without `redirectUrl` (a
    /// second-screen device sends none: its own scheme is no page for a phone) gets the emulator's done page
    /// (`/activate/done`), as the activation page gives it: the page a programmer's second-screen page would name.
    func authenticatePage(serviceProvider sp: String, code: String) -> HTTPResponse {
        let now = clock.nowMillis()
        guard var session = try? liveSession(code, sp: sp, now: now) else {
            return .html(400, page(title: "Bad Request", body: "<h1>Bad Request</h1><p>The authentication code is unknown or expired.</p>"))
        }
        if session.redirectURL == nil, session.mvpd != nil, session.domainName != nil {
            session.redirectURL = "\(baseURL)/activate/done"
            let completed = session
            state.withLock { $0.sessions[code] = completed }
        }
        guard session.missingParameters.isEmpty, let mvpdID = session.mvpd,
            let mvpd = config.serviceProvider(sp)?.mvpd(mvpdID), !mvpd.isTempPass
        else {
            return .html(
                400, page(title: "Bad Request", body: "<h1>Bad Request</h1><p>The authentication session is missing parameters.</p>"))
        }
        return .redirect("\(baseURL)/mock-mvpd/\(FormCoding.escape(mvpdID))/login?code=\(FormCoding.escape(code))")
    }

    func routeMockMVPD(_ request: HTTPRequest, _ parts: [String]) throws(Failure) -> HTTPResponse {
        guard parts.count == 2 else { return .text(404, "Not Found\n") }
        let mvpdID = parts[0]
        switch (request.method, parts[1]) {
        case ("GET", "login"): return loginForm(mvpdID: mvpdID, code: request.query["code"] ?? "", error: nil, status: 200)
        case ("POST", "login"): return submitLogin(mvpdID: mvpdID, form: request.form)
        case ("GET", "logout"):
            if let redirect = nonEmpty(request.query["redirect_url"]) { return .redirect(redirect) }
            return .html(200, page(title: "Signed out", body: "<h1>Signed out</h1><p>You are signed out of \(XML.escape(mvpdID)).</p>"))
        default: return .text(404, "Not Found\n")
        }
    }

    /// The login form: POST to `/mock-mvpd/{mvpd}/login` with `code` (hidden), `username`, `password`.
    func loginForm(mvpdID: String, code: String, error: String?, status: Int) -> HTTPResponse {
        let name = config.serviceProviders.lazy.compactMap { $0.mvpd(mvpdID)?.displayName }.first ?? mvpdID
        let problem = error.map { "<p class=\"error\" role=\"alert\">\(XML.escape($0))</p>\n" } ?? ""
        let body = """
            <h1>\(XML.escape(name))</h1>
            \(problem)<form method="post" action="/mock-mvpd/\(XML.escape(FormCoding.escape(mvpdID)))/login">
            <input type="hidden" name="code" value="\(XML.escape(code))">
            <label>Username <input type="text" name="username" autocomplete="username"></label>
            <label>Password <input type="password" name="password" autocomplete="current-password"></label>
            <button type="submit">Sign in</button>
            </form>
            """
        return .html(status, page(title: "\(name) sign in", body: body))
    }

    /// Checks the credentials; success 302s to the SP's assertion consumer with a one-time ticket.
    func submitLogin(mvpdID: String, form: [String: String]) -> HTTPResponse {
        let code = form["code"] ?? ""
        let now = clock.nowMillis()
        guard let session = state.withLock({ $0.sessions[code] }), now < session.notAfter, session.mvpd == mvpdID else {
            return loginForm(mvpdID: mvpdID, code: code, error: "This sign-in request is unknown or has expired.", status: 400)
        }
        guard let user = config.user(form["username"] ?? "", password: form["password"] ?? "", mvpd: mvpdID) else {
            return loginForm(mvpdID: mvpdID, code: code, error: "Wrong username or password.", status: 200)
        }
        let ticket = Random.hex(16)
        state.withLock { $0.tickets[ticket] = Ticket(code: session.code, username: user.username, mvpd: mvpdID) }
        return .redirect("\(baseURL)/sp/assertion?ticket=\(ticket)")
    }

    /// `GET /sp/assertion?ticket=…`: saves the regular profile for the session's (client, SP, device) and
    /// 302s to exactly the session's `redirectUrl`.
    func assertionConsumer(_ request: HTTPRequest) throws(Failure) -> HTTPResponse {
        let now = clock.nowMillis()
        let ticketID = request.query["ticket"] ?? ""
        guard let ticket = state.withLock({ $0.tickets.removeValue(forKey: ticketID) }),
            var session = state.withLock({ $0.sessions[ticket.code] }), now < session.notAfter,
            let sp = config.serviceProvider(session.serviceProvider), let user = config.user(named: ticket.username),
            let redirect = session.redirectURL
        else {
            return .html(400, page(title: "Bad Request", body: "<h1>Bad Request</h1><p>The sign-in ticket is unknown or expired.</p>"))
        }
        let key = IssuedProfileKey(clientID: session.clientID, serviceProvider: sp.id, deviceID: session.deviceID ?? "")
        let profile = saveProfile(
            key: key, mvpd: ticket.mvpd, user: user, type: "regular", issuer: ticket.mvpd, now: now, ttlSeconds: sp.profileTTLSeconds)
        session.completedProfile = (key, ticket.mvpd, profile.notBefore)
        recordSSOLogins(session.ssoIdentities, mvpd: ticket.mvpd, profile: profile)
        let completed = session
        state.withLock { $0.sessions[completed.code] = completed }
        return .redirect(redirect)
    }
}
