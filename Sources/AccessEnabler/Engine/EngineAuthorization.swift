import FoundationEssentials
import JSON
import ThreadAffinity

extension Engine {
    // MARK: checkAuthorization / getAuthorization
    // (Adobe's "iOS/tvOS API Reference"; Adobe Pass REST API V2, "Decisions APIs")

    func authorize(_ resource: String, data: JSONObject?, loginIfNeeded: Bool) async -> AuthorizationOutcome {
        let turn = await ready(loginIfNeeded ? .getAuthorization : .checkAuthorization)
        defer { endTurn(turn) }
        guard let requestor = turn.requestor else {
            return authorizationFailed(resource, SDKErrorCode.genericAuthorization, "", requestor: nil, profile: nil)
        }
        var current: Profile?
        do {
            current = try await currentProfile(requestor)
        } catch {
            return authorizationFailed(
                resource, SDKErrorCode.genericAuthorization, "", requestor: requestor, profile: nil, status: storeFailure(error))
        }
        if current == nil {
            guard loginIfNeeded else {
                return authorizationFailed(resource, SDKErrorCode.userNotAuthenticated, "", requestor: requestor, profile: nil)
            }
            identityHeaders = TempPassIdentity.headers(data)
            let login = await self.login(requestor, filter: nil, turn: turn)
            do {
                current = try await currentProfile(requestor)
            } catch {
                return authorizationFailed(
                    resource, SDKErrorCode.genericAuthorization, "", requestor: requestor, profile: nil, status: storeFailure(error))
            }
            // Any failed login, the user's cancel included ("Provider not Selected Error"), ends the call with
            // tokenRequestFailed after the login's own setAuthenticationStatus.
            guard login.status == AccessEnablerStatus.success, current != nil else {
                let code = login.errorCode.isEmpty ? SDKErrorCode.userNotAuthenticated : login.errorCode
                return authorizationFailed(resource, code, "", requestor: requestor, profile: nil, raised: login.statuses)
            }
        }
        guard let profile = current else {
            return authorizationFailed(resource, SDKErrorCode.userNotAuthenticated, "", requestor: requestor, profile: nil)
        }
        // `data` of this call, else the identity of the login (a promotional TempPass needs it on every decision).
        let identity = data?.isEmpty == false ? TempPassIdentity.headers(data) : identityHeaders
        let headers = await partnerHeaders(requestor, profile: profile) + identity
        let endpoint = RESTV2.authorize(requestor.id, mvpd: profile.mvpd, resources: [resource], headers: headers)
        var answer = await call(endpoint, with: requestor.client(for: profile.mvpd))
        var skew = answer.clockSkewed ? [Self.cfg100] : []
        // Item-level errors whose action is `retry` get at most two more tries (Adobe's "Enhanced error codes": client handling).
        for _ in 0..<2 {
            guard answer.value?.decision(for: resource)?.error?.action == "retry" else { break }
            await uncancelledSleep(for: .milliseconds(300), on: executor)
            answer = await call(endpoint, with: requestor.client(for: profile.mvpd))
            if answer.clockSkewed { skew = [Self.cfg100] }
        }
        return await authorizationOutcome(answer, resource: resource, requestor: requestor, profile: profile, raised: skew)
    }

    /// `raised`: statuses already sent for this call (CFG100), reasons of a failure before the final one.
    private func authorizationOutcome(
        _ answer: EndpointAnswer<DecisionsAnswer>, resource: String, requestor: Requestor, profile: Profile, raised: [AdvancedStatus]
    ) async -> AuthorizationOutcome {
        switch answer.result {
        case .ok:
            guard let decision = answer.value?.decision(for: resource), let authorized = decision.authorized else {
                return authorizationFailed(
                    resource, SDKErrorCode.genericAuthorization, "", requestor: requestor, profile: profile, status: Self.z500,
                    raised: raised)
            }
            if authorized, let token = decision.mediaToken {
                if let notAfter = decision.notAfter {
                    // A cache: queued without an fsync or a wait; a failure is logged.
                    let key = profileKey(requestor, profile.mvpd)
                    let log = configuration.log
                    store.submit({ error in log?(.warning, "store failure caching an authorization expiry: \(error)") }) {
                        try $0.setAuthorizationExpiry(notAfter, key, resource: resource)
                    }
                }
                delegate.setToken(token, forResource: resource)
                delegate.sendTrackingData(
                    ["true", profile.mvpd, profile.trackingGUID, "false", nil, nil] + requestor.trackingTail,
                    forEventType: TrackingEvent.authorization)
                switch decision.source {
                case "degradation":
                    delegate.status(
                        AdvancedStatus(id: "Z010", level: "warning", message: "Authorized under a degradation rule", resource: resource))
                case "temppass":
                    delegate.status(AdvancedStatus(id: "Z011", level: "info", message: "Authorized with TempPass", resource: resource))
                default:
                    break
                }
                return .token(token: token, resource: resource)
            }
            return await denied(decision.error, resource: resource, requestor: requestor, profile: profile, raised: raised)
        case .httpError(let status, _):
            let error = answer.error
            let code = error?.code ?? ""
            if status == 403, error?.meansProfileGone == true {
                return await denied(error, resource: resource, requestor: requestor, profile: profile, raised: raised)
            }
            if status == 400, code == "invalid_parameter_resources" {
                return authorizationFailed(
                    resource, SDKErrorCode.userNotAuthorized, error?.details ?? "", requestor: requestor, profile: profile,
                    status: AdvancedStatus(id: "Z130", level: "error", message: error?.message, resource: resource), raised: raised)
            }
            return authorizationFailed(
                resource, SDKErrorCode.internalAuthorization, "", requestor: requestor, profile: profile, status: Self.z500, raised: raised)
        case .throttled:
            return authorizationFailed(
                resource, SDKErrorCode.genericAuthorization, "", requestor: requestor, profile: profile,
                status: AdvancedStatus(id: "Z100", level: "error", message: "Too many requests", resource: resource), raised: raised)
        case .registration:
            return authorizationFailed(
                resource, SDKErrorCode.genericAuthorization, "", requestor: requestor, profile: profile,
                status: AdvancedStatus(id: "R401", level: "error", message: "No access token"), raised: raised)
        case .store(let error):
            return authorizationFailed(
                resource, SDKErrorCode.genericAuthorization, "", requestor: requestor, profile: profile, status: storeFailure(error),
                raised: raised)
        case .garbage, .transport:
            return authorizationFailed(
                resource, SDKErrorCode.genericAuthorization, "", requestor: requestor, profile: profile, status: Self.z500, raised: raised)
        }
    }

    static var z500: AdvancedStatus { AdvancedStatus(id: "Z500", level: "error", message: "Internal authorization error") }

    /// A deny (item-level or top-level error object): the MVPD's `details` reach the host intact.
    private func denied(
        _ error: EnhancedError?, resource: String, requestor: Requestor, profile: Profile, raised: [AdvancedStatus]
    ) async -> AuthorizationOutcome {
        let code = error?.code ?? ""
        let details = error?.details ?? ""
        let message = error?.message
        if error?.meansProfileGone == true {
            // The profile is gone at the backend: forget it here too, and tell the host its user is logged out
            // (setAuthenticationStatus is among checkAuthorization's callbacks) before tokenRequestFailed.
            do {
                try await deleteProfile(profile.mvpd, requestor)
            } catch {
                return authorizationFailed(
                    resource, SDKErrorCode.userNotAuthenticated, details, requestor: requestor, profile: profile,
                    status: storeFailure(error), raised: raised)
            }
            announce(AccessEnablerStatus.error, errorCode: SDKErrorCode.userNotAuthenticated)
            let status =
                error?.meansTempPassOver == true
                ? AdvancedStatus(id: "N111", level: "warning", message: message, resource: resource)
                : AdvancedStatus(id: "N130", level: "error", message: message, resource: resource)
            return authorizationFailed(
                resource, SDKErrorCode.userNotAuthenticated, details, requestor: requestor, profile: profile, status: status, raised: raised
            )
        }
        let id = code == "authorization_denied_by_degradation_rule" ? "Z169" : (code == "invalid_parameter_resources" ? "Z130" : "Z100")
        return authorizationFailed(
            resource, SDKErrorCode.userNotAuthorized, details, requestor: requestor, profile: profile,
            status: AdvancedStatus(id: id, level: "error", message: message, details: details.isEmpty ? nil : details, resource: resource),
            raised: raised)
    }

    /// Delivers tokenRequestFailed, the authorization tracking event, then `status`. The outcome's reasons are
    /// `raised` (statuses already sent for this call) and `status`, else the failed setRequestor's.
    func authorizationFailed(
        _ resource: String, _ errorCode: String, _ description: String, requestor: Requestor?, profile: Profile?,
        status: AdvancedStatus? = nil, raised: [AdvancedStatus] = []
    ) -> AuthorizationOutcome {
        delegate.tokenRequestFailed(resource, errorCode: errorCode, errorDescription: description)
        if let requestor {
            delegate.sendTrackingData(
                ["false", profile?.mvpd, profile?.trackingGUID, "false", errorCode, description] + requestor.trackingTail,
                forEventType: TrackingEvent.authorization)
        }
        if let status { delegate.status(status) }
        let reasons = machine.reasons(raised + (status.map { [$0] } ?? []), ofLogin: false)
        return .failed(resource: resource, errorCode: errorCode, errorDescription: description, statuses: reasons)
    }
}
