import Foundation
import JSON

// The second-screen activation page (README.md next to this file), standing in for the programmer's web app: the
// user types the code shown on the TV, picks an MVPD when the TV did not, and is sent to the authenticate URL.
extension Emulator {
    func activation(_ request: HTTPRequest, _ parts: [String]) throws(Failure) -> HTTPResponse {
        switch (request.method, parts) {
        case ("GET", []):
            return activationForm(requestor: request.query["requestor"], code: request.query["code"] ?? "", error: nil, status: 200)
        case ("POST", []):
            return submitActivation(request.form)
        case ("GET", ["done"]):
            return .html(200, page(title: "Activated", body: "<h1>You are signed in</h1><p>Return to your TV.</p>"))
        default:
            return .text(404, "Not Found\n")
        }
    }

    /// The form: POST to `/activate` with `code` (text), `mvpd` (select, optional when the TV chose one) and
    /// `requestor` (hidden, the service provider; default the first configured).
    func activationForm(requestor: String?, code: String, error: String?, status: Int) -> HTTPResponse {
        let sp = requestor.flatMap(config.serviceProvider) ?? config.serviceProviders[0]
        let options = sp.mvpds.filter { !$0.isTempPass }.map {
            "<option value=\"\(XML.escape($0.id))\">\(XML.escape($0.displayName))</option>"
        }.joined(separator: "\n")
        let problem = error.map { "<p class=\"error\" role=\"alert\">\(XML.escape($0))</p>\n" } ?? ""
        let body = """
            <h1>Activate your device</h1>
            \(problem)<form method="post" action="/activate">
            <input type="hidden" name="requestor" value="\(XML.escape(sp.id))">
            <label>Code shown on your TV <input type="text" name="code" value="\(XML.escape(code))" autocomplete="off"></label>
            <label>TV provider <select name="mvpd">
            <option value="">(as chosen on the TV)</option>
            \(options)
            </select></label>
            <button type="submit">Continue</button>
            </form>
            """
        return .html(status, page(title: "Activate", body: body))
    }

    /// Finds the session by code (whatever `requestor` says), validates it (as sessions retrieve does), fills the missing parameters (as sessions resume does:
    /// the chosen MVPD, the first domain, and `/activate/done` as redirect), then 302s to the authenticate URL.
    func submitActivation(_ form: [String: String]) -> HTTPResponse {
        let requested = form["requestor"].flatMap(config.serviceProvider) ?? config.serviceProviders[0]
        let code = (form["code"] ?? "").trimmingCharacters(in: .whitespaces).uppercased()
        let now = clock.nowMillis()
        // Codes are unique across service providers, so the code alone finds its session.
        let owner = state.withLock { $0.sessions[code]?.serviceProvider }
        guard let owner, let sp = config.serviceProvider(owner), var session = try? liveSession(code, sp: owner, now: now) else {
            return activationForm(requestor: requested.id, code: code, error: "That code is unknown or has expired.", status: 400)
        }
        if session.mvpd == nil {
            guard let chosen = nonEmpty(form["mvpd"]), let mvpd = sp.mvpd(chosen), !mvpd.isTempPass else {
                return activationForm(requestor: sp.id, code: code, error: "Choose your TV provider.", status: 400)
            }
            session.mvpd = mvpd.id
        }
        if session.domainName == nil { session.domainName = sp.domains.first?.name ?? "adobe.com" }
        if session.redirectURL == nil { session.redirectURL = "\(baseURL)/activate/done" }
        let updated = session
        state.withLock { $0.sessions[code] = updated }
        return .redirect("\(baseURL)/api/v2/authenticate/\(FormCoding.escape(sp.id))/\(FormCoding.escape(code))")
    }
}
