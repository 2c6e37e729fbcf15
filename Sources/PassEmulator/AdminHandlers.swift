import Foundation
import JSON

// The test-only admin interface under /__admin/ (README.md next to this file).
extension Emulator {
    func routeAdmin(_ request: HTTPRequest, _ parts: [String]) throws(Failure) -> HTTPResponse {
        switch (request.method, parts) {
        case ("GET", ["clock"]):
            return .json(200, ["nowMillis": .integer(clock.nowMillis())])
        case ("POST", ["clock"]):
            let body = try adminBody(request)
            let stopped = body["stopped"]
            guard stopped == nil || stopped?.boolValue != nil else { return .json(400, ["error": "stopped must be true or false"]) }
            if let stopped = stopped?.boolValue { clock.stop(stopped) }
            // Within a century either way: the clock is Int64 milliseconds.
            if let seconds = body["advanceSeconds"]?.doubleValue, seconds.magnitude <= 3_155_760_000 {
                clock.advance(seconds: seconds)
            } else if let millis = body["setMillis"]?.int64Value, (0...253_402_300_799_999).contains(millis) {
                clock.set(millis: millis)
            } else if stopped == nil {
                return .json(
                    400,
                    [
                        "error":
                            "expected {advanceSeconds} (at most a century either way), {setMillis} (epoch ms, years 1970 to 9999) or {stopped}"
                    ])
            }
            return .json(200, ["nowMillis": .integer(clock.nowMillis())])
        case ("POST", ["reset"]):
            state.withLock { $0 = EmulatorState(throttle: config.throttle.map(Throttle.init)) }
            clock.reset()
            return .json(200, ["reset": true])
        case ("POST", ["faults"]):
            let fault = try Fault(json: try adminBody(request))
            let count = state.withLock { state in
                state.faults.append(fault)
                return state.faults.count
            }
            return .json(201, ["faults": .integer(Int64(count))])
        case ("DELETE", ["faults"]):
            state.withLock { $0.faults.removeAll() }
            return .json(200, ["faults": 0])
        case ("GET", ["throttle"]):
            return .json(200, state.withLock { $0.throttle?.settings.json } ?? [:])
        case ("POST", ["throttle"]):
            let settings: ThrottleSettings
            do {
                settings = try ThrottleSettings(Reader(try adminBody(request), path: ""))
            } catch let error as ConfigError {
                return .json(400, ["error": .string(error.message)])
            } catch {
                return .json(400, ["error": "the body must be a JSON object"])
            }
            state.withLock { $0.throttle = Throttle(settings) }
            return .json(200, settings.json)
        case ("DELETE", ["throttle"]):
            state.withLock { $0.throttle = nil }
            return .json(200, [:])
        case ("POST", ["platform-services"]):
            let body = try adminBody(request)
            guard let sp = body["serviceProvider"]?.stringValue, let id = body["mvpd"]?.stringValue,
                let enabled = body["enablePlatformServices"]?.boolValue
            else { return .json(400, ["error": "expected {serviceProvider, mvpd, enablePlatformServices}"]) }
            guard config.serviceProvider(sp)?.mvpd(id) != nil else { return .json(404, ["error": "no such MVPD of that service provider"]) }
            let key = MVPDKey(serviceProvider: sp, mvpd: id)
            state.withLock { state in
                if enabled { state.platformServicesOff.remove(key) } else { state.platformServicesOff.insert(key) }
            }
            return .json(200, ["enablePlatformServices": .bool(enabled)])
        case ("GET", ["public-key"]):
            return HTTPResponse(status: 200, headers: [("Content-Type", "application/x-pem-file")], body: Array(key.publicKeyPEM.utf8))
        case ("POST", ["partner-saml"]):
            return try partnerSAML(try adminBody(request))
        case ("POST", ["profiles"]), ("DELETE", ["profiles"]):
            return try outOfBandProfiles(request.method == "POST", try adminBody(request))
        default:
            if let answer = try routeRules(request, parts, body: { () throws(Failure) in try adminBody(request) }) { return answer }
            return .json(404, ["error": "unknown admin call"])
        }
    }

    /// `POST /__admin/profiles {serviceProvider, mvpd, device, username?, ttlSeconds?}` logs `device` in at `mvpd` out
    /// of band, as a login made elsewhere for the same device would (a regular profile of `username`, else of the MVPD's
    /// first user, for every registered client, valid `ttlSeconds`, else the service provider's `profileTTLSeconds`);
    /// `DELETE` with `{serviceProvider, device, mvpd?}` logs it out (of every MVPD without `mvpd`). `device` is the
    /// device identifier itself, which `AP-Device-Identifier: fingerprint <base64>` carries encoded. Answers
    /// `{profiles: n}`, the profiles written or removed.
    private func outOfBandProfiles(_ create: Bool, _ body: JSON) throws(Failure) -> HTTPResponse {
        guard let spID = body["serviceProvider"]?.stringValue, let device = body["device"]?.stringValue, !device.isEmpty else {
            return .json(400, ["error": "expected {serviceProvider, device, mvpd, username?}"])
        }
        guard let sp = config.serviceProvider(spID) else { return .json(404, ["error": "no such service provider"]) }
        if let mvpd = body["mvpd"], mvpd.stringValue == nil { return .json(400, ["error": "mvpd must be a string"]) }
        if let username = body["username"], username.stringValue == nil { return .json(400, ["error": "username must be a string"]) }
        var ttlSeconds = sp.profileTTLSeconds
        if let given = body["ttlSeconds"], !given.isNull {
            guard let seconds = given.intValue, (1...315_360_000).contains(seconds) else {
                return .json(400, ["error": "ttlSeconds must be an integer from 1 to 315360000 (ten years)"])
            }
            ttlSeconds = Int64(seconds)
        }
        let mvpdID = body["mvpd"]?.stringValue
        let deviceID = Base64.encode(device)
        let clients = state.withLock { Array($0.clients.keys) }
        guard create else {
            let removed = state.withLock { state in
                var count = 0
                for client in clients {
                    let key = IssuedProfileKey(clientID: client, serviceProvider: sp.id, deviceID: deviceID)
                    if let mvpdID {
                        if state.profiles[key]?.removeValue(forKey: mvpdID) != nil { count += 1 }
                    } else {
                        count += state.profiles.removeValue(forKey: key)?.count ?? 0
                    }
                }
                return count
            }
            return .json(200, ["profiles": .integer(Int64(removed))])
        }
        guard let mvpdID, sp.mvpd(mvpdID) != nil else { return .json(404, ["error": "no such MVPD of that service provider"]) }
        let named = body["username"]?.stringValue
        guard let user = named.map({ config.user(named: $0) }) ?? config.users.first(where: { $0.mvpds.contains(mvpdID) }) else {
            return .json(404, ["error": "no such user of that MVPD"])
        }
        for client in clients {
            saveProfile(
                key: IssuedProfileKey(clientID: client, serviceProvider: sp.id, deviceID: deviceID), mvpd: mvpdID, user: user,
                type: "regular", issuer: mvpdID, now: clock.nowMillis(), ttlSeconds: ttlSeconds)
        }
        return .json(201, ["profiles": .integer(Int64(clients.count))])
    }

    private func adminBody(_ request: HTTPRequest) throws(Failure) -> JSON {
        guard let body = try? JSON.parse(request.body), body.objectValue != nil else {
            throw Failure(.json(400, ["error": "the body must be a JSON object"]))
        }
        return body
    }

    /// `{providerId, username, password, request}` → `{samlResponse}`: the MVPD (found by platformMappingId) checks
    /// the user and answers the verification token `request` that `sessions/sso/Apple` issued.
    private func partnerSAML(_ body: JSON) throws(Failure) -> HTTPResponse {
        guard let providerID = body["providerId"]?.stringValue, let username = body["username"]?.stringValue,
            let password = body["password"]?.stringValue, let token = body["request"]?.stringValue
        else { return .json(400, ["error": "expected providerId, username, password and request"]) }
        guard let mvpd = config.serviceProviders.lazy.compactMap({ $0.mvpd(platformMappingId: providerID) }).first else {
            return .json(400, ["error": "unsupported_provider"])
        }
        guard let user = config.user(username, password: password, mvpd: mvpd.id) else {
            return .json(401, ["error": "invalid_credentials"])
        }
        guard let data = Base64.decode(token), let query = String(data: data, encoding: .utf8),
            let requestID = MockSAML.attribute(query, "ID"), state.withLock({ $0.partnerRequests[requestID] }) != nil
        else { return .json(400, ["error": "invalid_verification_token"]) }
        let userID = user.attributes["userID"]?["value"]?.stringValue ?? user.username
        guard
            let saml = MockSAML.mint(
                requestID: requestID, providerID: providerID, username: user.username, userID: userID,
                now: clock.nowMillis(), key: key)
        else { return .json(500, ["error": "signing failed"]) }
        return .json(200, ["samlResponse": .string(saml)])
    }
}
