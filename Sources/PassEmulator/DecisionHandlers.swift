import Foundation
import JSON

// Decisions (Adobe Pass REST API V2, "Retrieve authorization decisions using specific mvpd" and "Retrieve
// preauthorization decisions using specific mvpd"). Per-resource outcomes arrive inside HTTP 200, in request order.
extension Emulator {
    /// `POST /api/v2/{sp}/decisions/authorize/{mvpd}` and `…/preauthorize/{mvpd}` with `{"resources": [...]}`.
    func decisions(_ request: HTTPRequest, _ sp: String, mvpd mvpdID: String, authorize: Bool) throws(Failure) -> HTTPResponse {
        let caller = try caller(request, sp, device: true)
        let mvpd = try mvpd(mvpdID, of: caller.serviceProvider)
        guard let body = try? JSON.parse(request.body), let items = body["resources"]?.arrayValue, !items.isEmpty else {
            throw Failure("invalid_parameter_resources")
        }
        var resources: [String] = []
        for (index, item) in items.enumerated() {
            guard let text = item.stringValue, !text.isEmpty else { throw Failure("invalid_parameter_resources") }
            if MRSS.isMalformed(text) {
                let details =
                    "Resource \(index + 1) starts with < but is not well-formed XML (MRSS): escape & < > in text as &amp; &lt; &gt;."
                throw Failure("invalid_parameter_resources", details: details)
            }
            resources.append(text)
        }
        let limit = authorize ? caller.serviceProvider.maxAuthorizeResources : caller.serviceProvider.maxPreauthorizeResources
        if limit > 0, resources.count > limit { throw Failure("too_many_resources") }
        var outcome = try outcomes(caller, mvpd, resources: resources, authorize: authorize, request: request)
        // Item-level errors set through `/__admin/item-errors` replace those resources' verdicts.
        for (index, resource) in resources.enumerated() {
            if let code = state.withLock({ $0.rules.takeItemError(for: resource) }) {
                outcome.verdicts[index] = .deny(code: code, details: nil)
            }
        }
        // Adobe's AuthZAll samples carry no decision-level times.
        let timed = authorize && mvpd.degradation != "AuthZAll"
        let decisions: [JSON] = zip(resources, outcome.verdicts).map { resource, verdict in
            decision(
                caller, mvpd: mvpd.id, resource: resource, verdict: verdict, source: outcome.source, user: outcome.userID,
                authorize: authorize,
                timed: timed)
        }
        return .json(200, ["decisions": .array(decisions)])
    }

    /// One resource's verdict: permit, or deny with an item-level error code and optional details.
    enum Verdict {
        case permit
        case deny(code: String, details: String?)
    }

    private func outcomes(
        _ caller: Caller, _ mvpd: MVPDConfig, resources: [String], authorize: Bool, request: HTTPRequest
    )
        throws(Failure) -> (source: String, verdicts: [Verdict], userID: String)
    {
        let device = caller.deviceID ?? ""
        if mvpd.promotional {
            let outcome = try promoVerdicts(caller, mvpd, resources: resources, authorize: authorize, request: request)
            return ("temppass", outcome.verdicts, outcome.userID)
        }
        if let seconds = mvpd.tempPassSeconds {
            let key = TempPassKey(serviceProvider: caller.serviceProvider.id, mvpd: mvpd.id, deviceID: device)
            let start =
                authorize
                ? startTempPass(sp: key.serviceProvider, mvpd: mvpd.id, device: device, now: caller.now)
                : (state.withLock { $0.tempPassStarts[key] } ?? caller.now)
            let valid = caller.now < start + seconds * 1000
            let verdict: Verdict = valid ? .permit : .deny(code: "temporary_access_duration_limit_exceeded", details: nil)
            return ("temppass", resources.map { _ in verdict }, "temppass|\(device)")
        }
        switch mvpd.degradation {
        case "AuthNAll", "AuthZAll":
            return ("degradation", resources.map { _ in .permit }, "degraded|\(device)")
        case "AuthZNone":
            let verdict = Verdict.deny(code: "authorization_denied_by_degradation_rule", details: mvpd.degradationMessage)
            return ("degradation", resources.map { _ in verdict }, "degraded|\(device)")
        default: break
        }
        let stored = caller.profileKey.flatMap { key in state.withLock { $0.profiles[key]?[mvpd.id] } }
        guard let profile = stored ?? ssoProfile(request, mvpd: mvpd, now: caller.now) else {
            throw Failure("authenticated_profile_missing")
        }
        if profile.type == "appleSSO" {
            guard let status = PartnerFrameworkStatus(header: request.header("ap-partner-framework-status")) else {
                throw Failure("authenticated_profile_missing")
            }
            let partner = try status.validate(caller.serviceProvider, now: caller.now)
            guard partner.id == mvpd.id else { throw Failure("invalid_header_pfs_provider_id_mismatch") }
        }
        guard profile.notAfter > caller.now else { throw Failure("authenticated_profile_expired") }
        let user = profile.username.flatMap(config.user(named:))
        let denyCode = authorize ? "authorization_denied_by_mvpd" : "preauthorization_denied_by_mvpd"
        let verdicts: [Verdict] = resources.map { resource in
            guard let user else { return .deny(code: denyCode, details: nil) }
            if let entitlement = user.entitlements[ResourceKey(ResourceMatcher.id(of: resource))] {
                return entitlement.permit ? .permit : .deny(code: denyCode, details: entitlement.details)
            }
            return user.permitUnlisted ? .permit : .deny(code: denyCode, details: nil)
        }
        let userID = profile.attributes["userID"]?["value"]?.stringValue ?? profile.username ?? ""
        return ("mvpd", verdicts, userID)
    }

    private func decision(
        _ caller: Caller, mvpd: String, resource: String, verdict: Verdict, source: String, user: String, authorize: Bool, timed: Bool
    ) -> JSON {
        let sp = caller.serviceProvider
        var object: JSONObject = [
            "resource": .string(resource), "serviceProvider": .string(sp.id), "mvpd": .string(mvpd),
            "source": .string(source),
        ]
        switch verdict {
        case .permit:
            object["authorized"] = true
            if authorize {
                let ttl = sp.mediaTokenTTLSeconds * 1000
                let token = MediaToken(
                    sessionGUID: Digest.sha256Hex("\(caller.clientID)|\(user)"), requestorID: sp.id, resourceID: resource,
                    ttl: ttl, issueTime: caller.now, mvpdId: mvpd)
                if let serialized = token.serialized(signedWith: key) {
                    object["token"] = .object([
                        "notBefore": .integer(caller.now), "notAfter": .integer(caller.now + ttl), "serializedToken": .string(serialized),
                    ])
                }
            }
        case .deny(let code, let details):
            object["authorized"] = false
            object["error"] = EnhancedError.object(code, details: details)
        }
        if timed {
            object["notBefore"] = .integer(caller.now)
            object["notAfter"] = .integer(caller.now + sp.authorizationTTLSeconds * 1000)
        }
        return .object(object)
    }
}
