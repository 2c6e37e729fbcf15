import Foundation
import JSON

// Profiles (Adobe Pass REST API V2, "Profiles APIs"). Timestamps are numbers of ms here.
extension Emulator {
    /// `GET /api/v2/{sp}/profiles` (mvpd nil) and `GET /api/v2/{sp}/profiles/{mvpd}`.
    func profiles(_ request: HTTPRequest, _ sp: String, mvpd mvpdID: String?) throws(Failure) -> HTTPResponse {
        let caller = try caller(request, sp, device: true)
        let partner = partnerMVPD(request, caller)
        guard let mvpdID else {
            var all = JSONObject()
            for mvpd in caller.serviceProvider.mvpds {
                if let profile = try? visibleProfile(caller, mvpd, partner: partner, request: nil, sso: request) {
                    all[mvpd.id] = profile.json
                }
            }
            return .json(200, ["profiles": .object(all)])
        }
        let mvpd = try mvpd(mvpdID, of: caller.serviceProvider)
        guard let profile = try visibleProfile(caller, mvpd, partner: partner, request: request, sso: request) else {
            return .json(200, ["profiles": [:]])
        }
        return .json(200, ["profiles": .object([mvpd.id: profile.json])])
    }

    /// `GET /api/v2/{sp}/profiles/code/{code}`: once the session's login completed, the device's profile at that
    /// MVPD (the one that login created, or a later login's of the same device and MVPD, which replaced it: two
    /// second screens of one device activated one after the other both end logged in); `{}` until then.
    func profileForCode(_ request: HTTPRequest, _ sp: String, code: String) throws(Failure) -> HTTPResponse {
        let caller = try caller(request, sp, device: false)
        let session = try liveSession(code, sp: sp, now: caller.now)
        guard let done = session.completedProfile,
            let profile = state.withLock({ $0.profiles[done.key]?[done.mvpd] }),
            profile.notBefore >= done.notBefore, profile.notAfter > caller.now
        else { return .json(200, ["profiles": [:]]) }
        return .json(200, ["profiles": .object([done.mvpd: profile.json])])
    }

    /// The valid profile the caller may see for `mvpd`: TempPass (403 once used up), AuthNAll degraded, a stored
    /// regular one, or an appleSSO one when `partner` (from a valid AP-Partner-Framework-Status) names this MVPD.
    /// `request` is the one-MVPD call's (nil for the all-profiles call, which lists no degraded profile, as Adobe's
    /// page says, and finds a promotional trial by device alone); there a promotional TempPass needs its identity.
    /// Without a regular profile, `sso`'s tokens may give a `platformSSO` / `serviceTokenSSO` one.
    func visibleProfile(
        _ caller: Caller, _ mvpd: MVPDConfig, partner: MVPDConfig?, request: HTTPRequest?, sso: HTTPRequest
    ) throws(Failure) -> IssuedProfile? {
        guard let key = caller.profileKey else { return nil }
        if mvpd.promotional {
            return try promoProfile(
                caller, mvpd, identity: try request.map { request throws(Failure) in try Self.requiredTempPassIdentity(request) })
        }
        if let seconds = mvpd.tempPassSeconds {
            let tempKey = TempPassKey(serviceProvider: key.serviceProvider, mvpd: mvpd.id, deviceID: key.deviceID)
            guard let start = state.withLock({ $0.tempPassStarts[tempKey] }) else { return nil }
            guard caller.now < start + seconds * 1000 else { throw Failure("temporary_access_duration_limit_exceeded") }
            return tempPassProfile(mvpd: mvpd.id, device: key.deviceID, start: start, seconds: seconds)
        }
        if let profile = state.withLock({ $0.profiles[key]?[mvpd.id] }), profile.notAfter > caller.now {
            if profile.type != "appleSSO" || partner?.id == mvpd.id { return profile }
        }
        if let profile = ssoProfile(sso, mvpd: mvpd, now: caller.now) { return profile }
        if mvpd.degradation == "AuthNAll", request != nil {
            let ttl = caller.serviceProvider.profileTTLSeconds * 1000
            let user = "95cf93bcd183214a" + String(Digest.sha256Hex("degraded|\(key.deviceID)").prefix(40))
            return IssuedProfile(
                mvpd: mvpd.id, type: "degraded", issuer: "Adobe", notBefore: caller.now, notAfter: caller.now + ttl,
                attributes: ["userID": .object(["value": .string(user), "state": "plain"])], username: nil)
        }
        return nil
    }

    func tempPassProfile(mvpd: String, device: String, start: Int64, seconds: Int64) -> IssuedProfile {
        let end = start + seconds * 1000
        let user = "temppass_" + String(Digest.sha256Hex("temppass|\(device)").prefix(40))
        return IssuedProfile(
            mvpd: mvpd, type: "temporary", issuer: "Adobe", notBefore: start, notAfter: end,
            attributes: [
                "expiration_date": .object(["value": .integer(end), "state": "plain"]),
                "userID": .object(["value": .string(user), "state": "plain"]),
            ], username: nil)
    }

    /// IssuedProfile attributes for a user: plain values as configured, `enc` values base64-wrapped (standing in
    /// for encryption with the programmer's certificate). `userID` is always present.
    func attributes(for user: UserConfig) -> JSONObject {
        var result = JSONObject()
        for (name, spec) in user.attributes {
            let value = spec["value"] ?? spec
            if spec["state"]?.stringValue == "enc" {
                result[name] = .object(["value": .string(Base64.encode(value.serializedString())), "state": "enc"])
            } else {
                result[name] = .object(["value": value, "state": "plain"])
            }
        }
        if result["userID"] == nil { result["userID"] = .object(["value": .string(user.username), "state": "plain"]) }
        return result
    }

    /// Stores a fresh regular (or appleSSO) profile for `user` at `mvpd` and returns it.
    @discardableResult
    func saveProfile(
        key: IssuedProfileKey, mvpd: String, user: UserConfig, type: String, issuer: String, now: Int64, ttlSeconds: Int64
    ) -> IssuedProfile {
        let profile = IssuedProfile(
            mvpd: mvpd, type: type, issuer: issuer, notBefore: now, notAfter: now + ttlSeconds * 1000,
            attributes: attributes(for: user), username: user.username)
        state.withLock { $0.profiles[key, default: [:]][mvpd] = profile }
        return profile
    }
}
