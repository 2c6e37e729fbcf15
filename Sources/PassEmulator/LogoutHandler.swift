import JSON

extension Emulator {
    /// `GET /api/v2/{sp}/logout/{mvpd}?redirectUrl=…` (Adobe Pass REST API V2, "Initiate logout for specific mvpd"):
    /// deletes the device's profile for the MVPD, then answers `logout` (with the mock MVPD logout URL),
    /// `partner_logout`, `complete` or `invalid`.
    func logoutAction(_ request: HTTPRequest, _ sp: String, mvpd mvpdID: String) throws(Failure) -> HTTPResponse {
        let caller = try caller(request, sp, device: true)
        let mvpd = try mvpd(mvpdID, of: caller.serviceProvider)
        func answer(_ name: String, _ type: String, url: String? = nil) -> HTTPResponse {
            var object: JSONObject = ["actionName": .string(name), "actionType": .string(type), "mvpd": .string(mvpd.id)]
            if let url { object["url"] = .string(url) }
            return .json(200, ["logouts": .object([mvpd.id: .object(object)])])
        }
        if mvpd.isTempPass || mvpd.degradation == "AuthNAll" { return answer("complete", "none") }
        let removed: IssuedProfile? = state.withLock { state in
            guard let key = caller.profileKey else { return nil }
            return state.profiles[key]?.removeValue(forKey: mvpd.id)
        }
        // Single logout: the SSO tokens sent end their logins at this MVPD too.
        let endedSSO = ssoLogout(request, mvpd: mvpd.id)
        guard removed != nil || endedSSO else { return answer("invalid", "none") }
        if removed?.type == "appleSSO" { return answer("partner_logout", "partner_interactive") }
        guard mvpd.hasLogout else { return answer("complete", "none") }
        var url = "\(baseURL)/mock-mvpd/\(FormCoding.escape(mvpd.id))/logout"
        if let redirect = nonEmpty(request.query["redirectUrl"]) { url += "?redirect_url=" + FormCoding.escape(redirect) }
        return answer("logout", "interactive", url: url)
    }
}
