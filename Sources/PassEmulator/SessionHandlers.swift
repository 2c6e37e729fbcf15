import Foundation
import JSON

// Sessions (Adobe Pass REST API V2, "Sessions APIs"): create, resume, retrieve. Timestamps are strings of ms here.
extension Emulator {
    /// `POST /api/v2/{sp}/sessions` (form: mvpd, domainName, redirectUrl; all optional).
    func createSession(_ request: HTTPRequest, _ sp: String) throws(Failure) -> HTTPResponse {
        let caller = try caller(request, sp, device: true)
        let form = request.form
        let mvpdID = nonEmpty(form["mvpd"])
        let redirect = nonEmpty(form["redirectUrl"])
        if let mvpdID { _ = try mvpd(mvpdID, of: caller.serviceProvider) }
        if let redirect, !Self.isValidRedirect(redirect) { throw Failure("invalid_parameter_redirect_url") }
        let sessionID = Random.uuid()
        if let mvpdID, let shortcut = try shortcut(caller, mvpdID: mvpdID, sessionID: sessionID, request: request) { return shortcut }
        let ttl = caller.serviceProvider.codeTTLSeconds * 1000
        var session = AuthenticationSession(
            code: Random.code(), sessionID: sessionID, serviceProvider: sp, clientID: caller.clientID, deviceID: caller.deviceID,
            deviceInfo: caller.deviceInfo, mvpd: mvpdID, domainName: nonEmpty(form["domainName"]), redirectURL: redirect,
            notBefore: caller.now, notAfter: caller.now + ttl)
        session.ssoIdentities = Self.ssoIdentities(request)
        state.withLock { $0.sessions[session.code] = session }
        return .json(200, sessionBody(session, next: session.missingParameters.isEmpty ? "authenticate" : "resume"))
    }

    /// `POST /api/v2/{sp}/sessions/{code}`: supplies missing parameters (device headers not required).
    func resumeSession(_ request: HTTPRequest, _ sp: String, code: String) throws(Failure) -> HTTPResponse {
        let caller = try caller(request, sp, device: false)
        let form = request.form
        var session = try liveSession(code, sp: sp, now: caller.now)
        if let mvpdID = nonEmpty(form["mvpd"]) {
            _ = try mvpd(mvpdID, of: caller.serviceProvider)
            session.mvpd = mvpdID
        }
        if let redirect = nonEmpty(form["redirectUrl"]) {
            guard Self.isValidRedirect(redirect) else { throw Failure("invalid_parameter_redirect_url") }
            session.redirectURL = redirect
        }
        if let domain = nonEmpty(form["domainName"]) { session.domainName = domain }
        let stored = session
        state.withLock { $0.sessions[code] = stored }
        if let mvpdID = session.mvpd, let device = session.deviceID {
            let owner = Caller(
                clientID: session.clientID, serviceProvider: caller.serviceProvider, deviceID: device, deviceInfo: nil, now: caller.now)
            if let shortcut = try shortcut(owner, mvpdID: mvpdID, sessionID: session.sessionID, request: request) { return shortcut }
        }
        return .json(200, sessionBody(session, next: session.missingParameters.isEmpty ? "authenticate" : "retry"))
    }

    /// `GET /api/v2/{sp}/sessions/{code}`: what the session has and lacks, and the device that made it.
    func retrieveSession(_ request: HTTPRequest, _ sp: String, code: String) throws(Failure) -> HTTPResponse {
        let caller = try caller(request, sp, device: false)
        let session = try liveSession(code, sp: sp, now: caller.now)
        var existing: JSONObject = [:]
        if let mvpd = session.mvpd { existing["mvpd"] = .string(mvpd) }
        if let domain = session.domainName { existing["domainName"] = .string(domain) }
        if let redirect = session.redirectURL { existing["redirectUrl"] = .string(redirect) }
        existing["serviceProvider"] = .string(session.serviceProvider)
        return .json(
            200,
            [
                "missingParameters": .array(session.missingParameters.map(JSON.string)),
                "existingParameters": .object(existing),
                "device": DeviceDescription.object(from: session.deviceInfo),
                "notBefore": .string(String(session.notBefore)),
                "notAfter": .string(String(session.notAfter)),
            ])
    }

    /// The `authorize` answers that skip a login: TempPass, AuthNAll degradation, an existing regular profile, or
    /// an SSO profile the request's tokens give (`authenticatedSSO`).
    /// Throws `temporary_access_duration_limit_exceeded` when the device's TempPass is used up. A promotional TempPass
    /// needs `AP-TempPass-Identity` (400 `invalid_header_identity_for_temporary_access`), starts the trial of that
    /// identity (or device) and throws the duration or resources limit once it is over.
    func shortcut(_ caller: Caller, mvpdID: String, sessionID: String, request: HTTPRequest) throws(Failure) -> HTTPResponse? {
        guard let mvpd = caller.serviceProvider.mvpd(mvpdID) else { return nil }
        let sp = caller.serviceProvider.id
        func authorize(_ reason: String) -> HTTPResponse {
            .json(
                200,
                [
                    "actionName": "authorize", "actionType": "direct", "reasonType": .string(reason),
                    "url": .string("/api/v2/\(sp)/decisions/authorize/\(mvpdID)"), "sessionId": .string(sessionID),
                    "mvpd": .string(mvpdID), "serviceProvider": .string(sp),
                ])
        }
        if mvpd.promotional, let device = caller.deviceID {
            let identity = try Self.requiredTempPassIdentity(request)
            let trial = promoTrial(sp, mvpdID, identity: identity, device: device, startAt: caller.now)
            if let trial, let limit = promoLimit(trial, mvpd, now: caller.now) { throw Failure(limit) }
            return authorize("temporary")
        }
        if let seconds = mvpd.tempPassSeconds, let device = caller.deviceID {
            let start = startTempPass(sp: sp, mvpd: mvpdID, device: device, now: caller.now)
            guard caller.now < start + seconds * 1000 else { throw Failure("temporary_access_duration_limit_exceeded") }
            return authorize("temporary")
        }
        if mvpd.degradation == "AuthNAll" { return authorize("degraded") }
        if let key = caller.profileKey, let profile = state.withLock({ $0.profiles[key]?[mvpdID] }),
            profile.type == "regular", profile.notAfter > caller.now
        {
            return authorize("authenticated")
        }
        if ssoProfile(request, mvpd: mvpd, now: caller.now) != nil { return authorize("authenticatedSSO") }
        return nil
    }

    /// The TempPass start for a device, starting it now if it has not started.
    func startTempPass(sp: String, mvpd: String, device: String, now: Int64) -> Int64 {
        let key = TempPassKey(serviceProvider: sp, mvpd: mvpd, deviceID: device)
        return state.withLock { state in
            if let start = state.tempPassStarts[key] { return start }
            state.tempPassStarts[key] = now
            return now
        }
    }

    /// The session for `code` under `sp`: unknown → `invalid_parameter_code`, expired → `invalid_authentication_session`.
    func liveSession(_ code: String, sp: String, now: Int64) throws(Failure) -> AuthenticationSession {
        guard let session = state.withLock({ $0.sessions[code] }), session.serviceProvider == sp else {
            throw Failure("invalid_parameter_code")
        }
        guard now < session.notAfter else { throw Failure("invalid_authentication_session") }
        return session
    }

    /// A SessionResponse body for `authenticate` / `resume` / `retry`.
    func sessionBody(_ session: AuthenticationSession, next: String, reason: String = "none") -> JSON {
        let sp = session.serviceProvider
        var object: JSONObject = ["actionName": .string(next)]
        if next == "authenticate" {
            object["actionType"] = "interactive"
            object["reasonType"] = .string(reason)
            object["url"] = .string("/api/v2/authenticate/\(sp)/\(session.code)")
        } else {
            object["actionType"] = "direct"
            object["reasonType"] = .string(reason)
            object["url"] = .string("/api/v2/\(sp)/sessions/\(session.code)")
            object["missingParameters"] = .array(session.missingParameters.map(JSON.string))
        }
        object["code"] = .string(session.code)
        object["sessionId"] = .string(session.sessionID)
        if let mvpd = session.mvpd { object["mvpd"] = .string(mvpd) }
        object["serviceProvider"] = .string(sp)
        object["notBefore"] = .string(String(session.notBefore))
        object["notAfter"] = .string(String(session.notAfter))
        return .object(object)
    }

    /// An absolute URL with a scheme (custom schemes such as `adobepass://ios.app` included).
    static func isValidRedirect(_ text: String) -> Bool {
        guard let url = URL(string: text), let scheme = url.scheme, !scheme.isEmpty else { return false }
        return text.contains("://")
    }
}

func nonEmpty(_ value: String?) -> String? {
    guard let value, !value.isEmpty else { return nil }
    return value
}
