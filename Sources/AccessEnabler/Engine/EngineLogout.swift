import JSON

extension Engine {
    // MARK: logout (Adobe's "iOS/tvOS API Reference": logout; Adobe Pass REST API V2, "Initiate logout for specific mvpd")

    public func logout() async -> AuthenticationStatus {
        let loggedOut = AuthenticationStatus.failed(SDKErrorCode.userNotAuthenticated)
        let turn = await ready(.logout)
        defer { endTurn(turn) }
        guard let requestor = turn.requestor else {
            // Nothing was logged out (no requestor: its setRequestor failed, or the instance closed before it was
            // answered): the failure outcome, not the logged-out status a host takes for a logout done.
            let failed = AuthenticationStatus.failed(SDKErrorCode.genericAuthentication)
            announce(failed.status, errorCode: failed.errorCode)
            return AuthenticationStatus(status: failed.status, errorCode: failed.errorCode, statuses: machine.reasons([], ofLogin: false))
        }
        // A login being completed (its page handed back, its profile being read) ends first, then this logout ends
        // it: the login would otherwise be stored after the logout, undoing it.
        if case .completing? = machine.login?.step {
            _ = await withCheckedContinuation { waiter in
                if let outcome = machine.joined(waiter) { waiter.resume(returning: outcome) }
            }
        }
        var logoutURL: String?
        var logoutMVPD: MVPD?
        var partner = false
        var logins: [(mvpd: String, partner: Bool)]
        do {
            logins = try await storedProfiles(requestor, fresh: true).map { ($0.mvpd, $0.isPartner) }
        } catch {
            return logoutFailed(storeFailure(error))
        }
        // None stored: the backend may still hold one, which the next setRequestor's re-sync would bring back. Not
        // while a login is in progress: a second screen completed on the phone is the TV's login still to come.
        if logins.isEmpty, machine.login == nil { logins = await backendLogins(requestor).map { ($0, false) } }
        // Each MVPD's logout is asked of the backend, and its profile deleted once it is taken; one not taken keeps
        // its profile, the others still go, and the logout then fails with the first such reason.
        var notTaken: AdvancedStatus?
        for login in logins {
            let client = requestor.client(for: login.mvpd)
            let redirect = redirectURL(for: requestor.mvpd(login.mvpd))
            let answer = await call(RESTV2.logout(requestor.id, mvpd: login.mvpd, redirectURL: redirect), with: client)
            if let reason = Self.logoutNotTaken(answer, mvpd: login.mvpd) {
                notTaken = notTaken ?? reason
                continue
            }
            let entry = answer.value?.entry(for: login.mvpd)
            if login.partner || entry?.actionName == "partner_logout" { partner = true }
            if let entry, entry.actionName == "logout", let url = entry.url, logoutURL == nil {
                logoutURL = client.absolute(url)
                logoutMVPD = requestor.mvpd(login.mvpd)
            }
            do {
                try await deleteProfile(login.mvpd, requestor)
            } catch {
                return logoutFailed(storeFailure(error))
            }
        }
        if let notTaken { return logoutFailed(notTaken) }
        // The SDK's logout clears the application's whole token storage: this application's logins under its
        // other requestors on this device go too (Adobe's logout is per requestor: those stay on the server).
        do {
            let scopes = Set(requestor.scopes)
            for key in try await store.otherRequestorsProfiles(scopes: scopes, device: deviceID ?? "", requestor: requestor.id) {
                permits.drop { $0 == key }
                try await store.deleteProfile(key)
            }
        } catch {
            return logoutFailed(storeFailure(error))
        }
        select(nil, requestor)
        // A logout whose task was cancelled (`$/cancelRequest`) does not wait for its page either.
        guard configuration.webView, let logoutURL, !machine.closed, !Task.isCancelled else {
            announce(loggedOut.status, errorCode: loggedOut.errorCode)
            if partner { delegate.status(Self.vsa203) }
            return loggedOut
        }
        if machine.logout != nil { _ = finishLogout() }
        // Waiting on the host (the logout page): the next call may go on.
        endTurn(turn, waitsOnHost: true)
        // Cancelling the call (`$/cancelRequest`) ends the page's wait as its timer would.
        let awaited = AwaitedFlow()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let flow = machine.logoutStarted(continuation, partner: partner)
                awaited.id = flow
                startLogoutTimer(flow: flow)
                delegate.navigate(toUrl: logoutURL, useSVC: useSVC(for: logoutMVPD))
            }
        } onCancel: {
            after(.zero) { engine in
                if let flow = awaited.id { engine.endLogout(flow: flow) }
            }
        }
    }

    /// The backend did not take the logout, or the local profiles could not be deleted (the user stays logged in on
    /// this device): setAuthenticationStatus(0, "Generic Authentication Error") and `status`, the reason.
    private func logoutFailed(_ status: AdvancedStatus) -> AuthenticationStatus {
        let outcome = AuthenticationStatus(
            status: AccessEnablerStatus.error, errorCode: SDKErrorCode.genericAuthentication, statuses: [status])
        announce(outcome.status, errorCode: outcome.errorCode)
        delegate.status(status)
        return outcome
    }

    /// Why the backend did not take a logout, as the reason of the logout's failure (its login is then kept:
    /// Protocol/README.md, Lifecycle 4); nil when it took it (a 2xx, whatever its body) or no longer has the login
    /// (an error whose action is `authentication`). Not reached or no whole answer (CFG404; the backend may have
    /// taken it: the next setRequestor asks it again), TLS refused (SEC420), a 5xx (CFG5xx), throttled (CFG429), no
    /// access token (R400, R401), another 4xx (CFG400, the backend's error in `details`), the store (STORE500).
    static func logoutNotTaken(_ answer: EndpointAnswer<LogoutAnswer>, mvpd: String) -> AdvancedStatus? {
        let kept = "the logout of \(mvpd) was not made at the backend, and its login is kept"
        if answer.error?.action == .authentication { return nil }
        switch answer.result {
        case .ok, .garbage: return nil
        case .httpError(let status, let error) where status >= 500:
            return AdvancedStatus(.cfg5xx(status), message: "HTTP \(status): \(kept)", details: EnhancedError(error)?.message)
        case .httpError(401, _): return AdvancedStatus(.r401, message: "The access token was refused: \(kept)")
        case .httpError(let status, let error):
            let code = EnhancedError(error).map { $0.code.isEmpty ? "" : " \($0.code)" } ?? ""
            return AdvancedStatus(.cfg400, message: "HTTP \(status)\(code): \(kept)", details: EnhancedError(error)?.message)
        case .throttled: return AdvancedStatus(.cfg429, message: "Too many requests: \(kept)")
        case .transport(.insecure): return AdvancedStatus(.sec420, message: "The backend's TLS certificate did not verify: \(kept)")
        case .transport:
            return AdvancedStatus(
                .cfg404,
                message: "No whole answer from the backend: the logout of \(mvpd) may not have been made, and its login is kept "
                    + "(the next setRequestor asks the backend again)")
        case .registration, .store: return configurationFailureStatus(answer.result)
        }
    }

    /// Ends the waiting logout with setAuthenticationStatus(0, "User Not Authenticated Error").
    func finishLogout() -> AuthenticationStatus {
        endLogout(flow: nil)
        return .failed(SDKErrorCode.userNotAuthenticated)
    }

    /// After logging out a partner login: the user must also sign out on the platform (Adobe's "Apple SSO Cookbook
    /// (REST API V2)", logout).
    static var vsa203: AdvancedStatus {
        AdvancedStatus(.vsa203)
    }

    // MARK: getMetadata (Adobe's "iOS/tvOS API Reference": getMetadata; Protocol/README.md)

    public func getMetadata(_ request: MetadataRequest, arguments: JSON) async -> MetadataStatus {
        var value = JSON.null
        var encrypted = false
        let turn = await ready(.getMetadata)
        defer { endTurn(turn) }
        let requestor = turn.requestor
        var failure: AdvancedStatus?
        do {
            if case .deviceID = request {
                value = .string(try await resolveDeviceID())
            } else if let requestor {
                // One store read (profiles with their authorization expiry), so that queued calls keep their order.
                let resource: String? = if case .authorizationExpiry(let resource) = request { resource } else { nil }
                let read = requestor.own(try await store.profiles(of: logins(requestor), authorizationExpiryOf: resource))
                let stored = read.compactMap { key, entry in (try? JSON.parse(entry.0.json)).map { Profile(mvpd: key.mvpd, json: $0) } }
                if let profile = currentProfile(in: stored) {
                    let expiry = read.first { $0.0.mvpd == profile.mvpd }?.1.1
                    value = metadata(request, profile: profile, authorizationExpiry: expiry, encrypted: &encrypted)
                }
            }
        } catch {
            value = .null
            failure = storeFailure(error)
        }
        let expires = value.int64Value.flatMap { request.isExpiry ? $0 : nil }
        if let expires { value = .string(SDKDate.format(millis: expires)) }
        var status = MetadataStatus(metadata: value, encrypted: encrypted, key: request.key, arguments: arguments, expires: expires)
        delegate.setMetadataStatus(
            status.metadata, encrypted: status.encrypted, forKey: status.key, andArguments: status.arguments, expires: expires)
        if let failure { delegate.status(failure) }
        // Why there is nothing, when something failed (Protocol/README.md, "Failure reasons").
        if let failure {
            status.statuses = [failure]
        } else if requestor == nil, request != .deviceID {
            status.statuses = machine.reasons([], ofLogin: false)
        }
        return status
    }

    private func metadata(_ request: MetadataRequest, profile: Profile, authorizationExpiry: Int64?, encrypted: inout Bool) -> JSON {
        var value = JSON.null
        switch request {
        case .authenticationExpiry:
            value = .integer(profile.notAfter)
        case .authorizationExpiry:
            if let notAfter = authorizationExpiry, notAfter > clock.nowMillis() {
                value = .integer(notAfter)
            }
        case .userMetadata(let name):
            if name == "tokenSource" {
                // How the login came: partner SSO, platform identity, service token, or the MVPD's own login.
                let single = profile.type.flatMap { Self.singleSignOnTypes.contains($0) ? $0 : nil }
                value = .string(profile.issuer == "Apple" ? "Apple" : single ?? profile.mvpd)
            } else if let attribute = profile.attribute(name) {
                value = attribute.value
                encrypted = attribute.encrypted
            }
        case .userMetadataObject:
            // The object itself is plain; its `encrypted` names the values the programmer must decrypt.
            let metadata = profile.userMetadata
            value = [
                "updated": .integer(profile.notBefore / 1000), "encrypted": .array(metadata.encrypted.map { .string($0) }),
                "data": .object(metadata.data),
            ]
        case .deviceID:
            break
        }
        return value
    }
}
