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
            let login = await self.login(requestor, filter: nil, identity: TempPassIdentity.headers(data), turn: turn)
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
        let identity = data?.isEmpty == false ? TempPassIdentity.headers(data) : machine.tempPassIdentity
        let headers = await partnerHeaders(requestor, profile: profile) + identity
        let endpoint = RESTV2.authorize(requestor.id, mvpd: profile.mvpd, resources: [resource], headers: headers)
        var answer = await call(endpoint, with: requestor.client(for: profile.mvpd))
        var skew = answer.clockSkewed ? [Self.cfg100] : []
        // Errors whose action is `retry` get at most two more tries (Adobe's "Enhanced Error Codes": response handling).
        for _ in 0..<2 {
            guard case .failed(.retry, _) = DecisionOutcome(answer, resource: resource) else { break }
            await uncancelledSleep(for: .milliseconds(300), on: executor)
            answer = await call(endpoint, with: requestor.client(for: profile.mvpd))
            if answer.clockSkewed { skew = [Self.cfg100] }
        }
        return await authorizationOutcome(
            DecisionOutcome(answer, resource: resource), resource: resource, requestor: requestor, profile: profile, raised: skew)
    }

    /// Why a login the backend no longer has ended: SEC412 (the device is not the login's), N111 (the TempPass ran
    /// out), else N130.
    static func loggedOutStatus(_ error: EnhancedError?) -> StatusCode {
        if error?.known == .deviceIdentifierMismatch { return .sec412 }
        return error?.endsTempPass == true ? .n111 : .n130
    }

    /// `raised`: statuses already sent for this call (CFG100), reasons of a failure before the final one.
    private func authorizationOutcome(
        _ outcome: DecisionOutcome, resource: String, requestor: Requestor, profile: Profile, raised: [AdvancedStatus]
    ) async -> AuthorizationOutcome {
        func failed(_ errorCode: String, _ description: String = "", _ status: AdvancedStatus) -> AuthorizationOutcome {
            authorizationFailed(resource, errorCode, description, requestor: requestor, profile: profile, status: status, raised: raised)
        }
        switch outcome {
        case .permitted(let decision, let token):
            if let notAfter = decision.notAfter {
                // A cache: queued without an fsync or a wait; a failure is logged by the store.
                let key = profileKey(requestor, profile.mvpd)
                store.submit { $0.setAuthorizationExpiry(notAfter, key, resource: resource) }
            }
            delegate.setToken(token, forResource: resource)
            delegate.sendTrackingData(
                ["true", profile.mvpd, profile.trackingGUID, "false", nil, nil] + requestor.trackingTail,
                forEventType: TrackingEvent.authorization)
            let advisory: [AdvancedStatus] =
                switch decision.source {
                case "degradation": [AdvancedStatus(.z010, resource: resource)]
                case "temppass": [AdvancedStatus(.z011, resource: resource)]
                default: []
                }
            for status in advisory { delegate.status(status) }
            return .token(token: token, resource: resource, statuses: advisory)
        case .failed(let failure, let error):
            let message = error?.message
            let details = error?.details ?? ""
            switch failure {
            case .loginGone:
                // The login is gone at the backend: forget it here too, and tell the host its user is logged out
                // (setAuthenticationStatus is among checkAuthorization's callbacks) before tokenRequestFailed.
                do {
                    try await deleteProfile(profile.mvpd, requestor)
                } catch {
                    return failed(SDKErrorCode.userNotAuthenticated, details, storeFailure(error))
                }
                announce(AccessEnablerStatus.error, errorCode: SDKErrorCode.userNotAuthenticated)
                return failed(
                    SDKErrorCode.userNotAuthenticated, details,
                    AdvancedStatus(Self.loggedOutStatus(error), message: message, resource: resource))
            case .denied(let code):
                return failed(
                    SDKErrorCode.userNotAuthorized, details,
                    AdvancedStatus(code, message: message, details: details.isEmpty ? nil : details, resource: resource))
            case .retry:
                return failed(
                    SDKErrorCode.internalAuthorization, "",
                    AdvancedStatus(.z120, details: message, resource: resource))
            case .technical(let code):
                return failed(
                    code == .r401 ? SDKErrorCode.genericAuthorization : SDKErrorCode.internalAuthorization, "",
                    AdvancedStatus(code, message: message ?? code.message, details: details.isEmpty ? nil : details, resource: resource))
            }
        case .unreadable(let why):
            return failed(SDKErrorCode.genericAuthorization, "", AdvancedStatus(.z500, details: why, resource: resource))
        case .insecure:
            return failed(SDKErrorCode.genericAuthorization, "", AdvancedStatus(.sec420, resource: resource))
        case .throttled:
            return failed(SDKErrorCode.genericAuthorization, "", AdvancedStatus(.z100, message: "Too many requests", resource: resource))
        case .registration:
            return failed(SDKErrorCode.genericAuthorization, "", AdvancedStatus(.r401, resource: resource))
        case .store(let error):
            return failed(SDKErrorCode.genericAuthorization, "", storeFailure(error))
        }
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

/// What a decisions answer says of one resource, read once (Adobe Pass REST API V2, "Decisions APIs"; Adobe's
/// "Enhanced Error Codes": an item-level and a top-level error object are handled alike).
enum DecisionOutcome {
    case permitted(Decision, token: String)
    case failed(DecisionFailure, EnhancedError?)
    /// No decision for the resource, a body that is not JSON, or no answer at all; why, for Z500's `details`.
    case unreadable(String)
    /// The backend's TLS certificate did not verify.
    case insecure
    case throttled
    case registration
    case store(TokenStoreError)

    init(_ answer: EndpointAnswer<DecisionsAnswer>, resource: String) {
        switch answer.result {
        case .ok:
            guard let decision = answer.value?.decision(for: resource), let authorized = decision.authorized else {
                self = .unreadable("the answer has no usable decision for the resource (none names it, or its authorized is not a boolean)")
                return
            }
            if authorized {
                // A permit with no media token is an answer that cannot be used, not a denial.
                self = decision.mediaToken.map { .permitted(decision, token: $0) } ?? .unreadable("a permit without a media token")
            } else {
                self = .failed(DecisionFailure(decision.error, status: 403), decision.error)
            }
        case .httpError(let status, _): self = .failed(DecisionFailure(answer.error, status: status), answer.error)
        case .throttled: self = .throttled
        case .registration: self = .registration
        case .store(let error): self = .store(error)
        case .transport(.insecure): self = .insecure
        case .garbage: self = .unreadable("the answer is not JSON (its content type, or a malformed or cut body)")
        case .transport(.timeout): self = .unreadable("no whole answer within the request timeout")
        case .transport(.unavailable(let reason)): self = .unreadable("no HTTP: \(reason)")
        case .transport:
            self = .unreadable("no whole answer: the backend could not be reached, closed the connection, or redirected (never followed)")
        }
    }
}

/// What a refused decision means for the call, by the error's action (Protocol/README.md, "Authorization failures").
enum DecisionFailure: Equatable {
    /// `authentication`: the login is gone at the backend (the host is told it is logged out).
    case loginGone
    /// `retry`: it may succeed if asked again.
    case retry
    /// A denial (`none` with status 403, `authorization`): Z100, Z110 (repeated attempts), Z130 (the resource), Z169
    /// (a degradation rule).
    case denied(StatusCode)
    /// Nothing the user can change: Z500 (`configuration`, any other `none`), R401 (`application-registration`: the
    /// access token was still refused after the client refreshed it, registering again when told to).
    case technical(StatusCode)

    /// `status`: the error's own, else the HTTP status it came with (403 for an item-level error).
    init(_ error: EnhancedError?, status: Int) {
        guard let error else {
            self = status == 403 ? .denied(.z100) : .technical(.z500)
            return
        }
        if error.endsLogin {
            self = .loginGone
            return
        }
        switch error.action {
        case .authentication: self = .loginGone
        case .retry: self = .retry
        case .configuration: self = .technical(.z500)
        case .applicationRegistration: self = .technical(.r401)
        case .authorization: self = .denied(.z100)
        case .none:
            switch error.known {
            case .authorizationDeniedByDegradationRule: self = .denied(.z169)
            case .invalidParameterResources, .missingResource, .malformedAuthzRequest: self = .denied(.z130)
            case .maximumAttemptsExceeded: self = .denied(.z110)
            default: self = (error.status ?? status) == 403 ? .denied(.z100) : .technical(.z500)
            }
        }
    }
}
