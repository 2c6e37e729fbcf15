import Foundation
import JSON

/// One login flow: from the picker to the end (adobe-pass-sdk-notes §2.5–2.7).
struct LoginFlow {
    enum Step {
        /// Partner SSO: asking the host (platform picker, account exchange); then the picker or the end.
        case partner
        /// displayProviderDialog sent; waiting for setSelectedProvider.
        case picker
        /// navigateToUrl sent; waiting for handleExternalURL.
        case redirect(code: String, mvpd: String)
        /// REGCODE sent; polling `profiles/code/{code}`.
        case polling(code: String, mvpd: String)
        /// Fetching the profile after handleExternalURL.
        case completing
    }
    let id: Int
    /// The requestor the flow started under; a repeated setRequestor does not change it.
    let requestor: Requestor
    var step: Step = .picker
    /// Everyone the flow's outcome answers: getAuthentication, getAuthorization, a repeated handleExternalURL.
    var waiters: [CheckedContinuation<AuthenticationStatus, Never>] = []
}

extension Engine {
    /// The domain sent as `domainName` when creating sessions.
    static let domainName = "adobe.com"

    // MARK: getAuthentication

    func getAuthentication(forceAuthn: Bool, data: JSONObject?, filter: ProviderFilter?) async -> AuthenticationStatus {
        guard let requestor = await ready() else {
            return report(.failed(ErrorCode.genericAuthentication), requestor: nil, profile: nil, cached: false)
        }
        identityHeaders = TempPassIdentity.headers(data)
        let current: Profile?
        do {
            current = try await currentProfile(requestor)
        } catch {
            return report(.failed(ErrorCode.genericAuthentication), requestor: requestor, profile: nil, cached: false, status: storeFailure(error))
        }
        if !forceAuthn, let profile = current {
            let stands = profile.isPartner ? await partnerAuthenticationCheck(requestor, profile: profile).valid : true
            if stands {
                return report(.authenticated, requestor: requestor, profile: profile, cached: true)
            }
        }
        return await login(requestor, filter: filter)
    }

    /// Starts (or joins) the login flow and waits for its end.
    /// `filter` narrows the platform's picker only; the provider dialog lists every MVPD (as the SDK does).
    func login(_ requestor: Requestor, filter: ProviderFilter?) async -> AuthenticationStatus {
        if loginFlow != nil {
            return await withCheckedContinuation { loginFlow?.waiters.append($0) }
        }
        if cancelled {
            return report(
                .failed(ErrorCode.providerNotSelected), requestor: requestor, profile: nil, cached: false,
                status: AdvancedStatus(id: "N005", level: "info", message: "The provider selection was cancelled"))
        }
        if requestor.mvpds.isEmpty {
            return report(.failed(ErrorCode.genericAuthentication), requestor: requestor, profile: nil, cached: false)
        }
        let mvpds = requestor.mvpds
        flowCounter += 1
        lastCompleted = nil
        loginFlow = LoginFlow(id: flowCounter, requestor: requestor)
        let partner = partnerApplies(requestor)
        if partner { loginFlow?.step = .partner }
        let flowID = flowCounter
        return await withCheckedContinuation { continuation in
            loginFlow?.waiters.append(continuation)
            if partner {
                Task { await self.partnerLogin(requestor, mvpds: mvpds, filter: filter, flowID: flowID) }
            } else {
                delegate.displayProviderDialog(mvpds)
            }
        }
    }

    /// Ends the login flow: callbacks first, then every waiter gets the status.
    func finishLogin(_ outcome: AuthenticationStatus, requestor: Requestor?, profile: Profile?, status: AdvancedStatus? = nil) {
        let waiters = loginFlow?.waiters ?? []
        loginFlow = nil
        pollTask?.cancel()
        pollTask = nil
        lastCompleted = outcome
        if outcome.status != AccessEnablerStatus.success, let requestor { select(nil, requestor) }
        report(outcome, requestor: requestor, profile: profile, cached: false, status: status)
        for waiter in waiters { waiter.resume(returning: outcome) }
    }

    /// Stores a new profile (durably, before any callback) and ends the flow (or reports, when there is none)
    /// with success; a failed write ends it with "Generic Authentication Error" and status STORE500.
    func loginSucceeded(_ profile: Profile, _ requestor: Requestor) async -> AuthenticationStatus {
        let flowID = loginFlow?.id
        do {
            try await saveProfile(profile, requestor)
        } catch {
            let status = storeFailure(error)
            guard loginFlow?.id == flowID else { return lastCompleted ?? .failed(ErrorCode.genericAuthentication) }
            return loginFailed(ErrorCode.genericAuthentication, requestor, status: status)
        }
        // The flow may have been ended (cancelled) while the profile was written: the login stands, unreported.
        if let flowID, loginFlow?.id != flowID { return lastCompleted ?? .authenticated }
        select(requestor.mvpd(profile.mvpd), requestor)
        let status: AdvancedStatus? =
            if profile.isTemporary {
                AdvancedStatus(id: "N011", level: "info", message: "Authenticated with TempPass")
            } else if profile.isDegraded {
                AdvancedStatus(id: "N010", level: "warning", message: "Authenticated under an authenticate-all degradation rule")
            } else {
                nil
            }
        if loginFlow != nil {
            finishLogin(.authenticated, requestor: requestor, profile: profile, status: status)
        } else {
            lastCompleted = .authenticated
            report(.authenticated, requestor: requestor, profile: profile, cached: false, status: status)
        }
        return .authenticated
    }

    /// Ends the flow (or reports, when there is none) with a failure.
    func loginFailed(_ code: String, _ requestor: Requestor?, status: AdvancedStatus? = nil) -> AuthenticationStatus {
        let outcome = AuthenticationStatus.failed(code)
        if loginFlow != nil {
            finishLogin(outcome, requestor: requestor, profile: nil, status: status)
        } else {
            if let requestor { select(nil, requestor) }
            report(outcome, requestor: requestor, profile: nil, cached: false, status: status)
        }
        return outcome
    }

    /// The failure a backend answer means for a login (adobe-pass-sdk-notes §2.5 step 7).
    func loginFailure(_ result: APIResult, _ requestor: Requestor, secondScreen: Bool = false) -> AuthenticationStatus {
        let regStatus = secondScreen ? AdvancedStatus(id: "REG500", level: "error", message: "No authentication code") : nil
        switch result {
        case .transport:
            return loginFailed(ErrorCode.providerNotAvailable, requestor, status: regStatus)
        case .registration:
            return loginFailed(ErrorCode.genericAuthentication, requestor, status: AdvancedStatus(id: "R401", level: "error", message: "No access token"))
        case .store(let error):
            return loginFailed(ErrorCode.genericAuthentication, requestor, status: storeFailure(error))
        case .throttled, .garbage, .httpError, .ok:
            return loginFailed(ErrorCode.internalAuthentication, requestor, status: regStatus)
        }
    }

    // MARK: setSelectedProvider (adobe-pass-sdk-notes §2.6; never queued)

    func setSelectedProvider(_ mvpdID: String?) async -> SelectionOutcome {
        let cancelStatus = AdvancedStatus(id: "N005", level: "info", message: "The provider selection was cancelled")
        guard let requestor = loginFlow?.requestor ?? inForce else {
            return .ended(loginFailed(ErrorCode.providerNotSelected, nil, status: mvpdID == nil ? cancelStatus : nil))
        }
        guard let mvpdID else {
            return .ended(loginFailed(ErrorCode.providerNotSelected, requestor, status: cancelStatus))
        }
        guard let mvpd = requestor.mvpd(mvpdID) else {
            return .ended(loginFailed(ErrorCode.providerNotSelected, requestor))
        }
        pollTask?.cancel()
        pollTask = nil
        select(mvpd, requestor)
        delegate.sendTrackingData([mvpd.ID] + requestor.trackingTail, forEventType: TrackingEvent.selectedProvider)
        if mvpd.isTempPass {
            return .ended(await tempPassLogin(mvpd, requestor))
        }
        guard let flowID = loginFlow?.id else { return .started }
        loginFlow?.step = .picker
        let client = requestor.client(for: mvpd.ID)
        let result = await client.call(
            "POST", "/api/v2/\(FormEncoding.escape(requestor.id))/sessions",
            form: [("mvpd", mvpd.ID), ("domainName", Self.domainName), ("redirectUrl", configuration.redirectURL)], headers: identityHeaders)
        guard loginFlow?.id == flowID else { return .ended(lastCompleted ?? .failed(ErrorCode.providerNotSelected)) }
        guard case .ok(let body) = result else {
            return .ended(loginFailure(result, requestor, secondScreen: !configuration.webView))
        }
        switch body["actionName"]?.stringValue {
        case "authorize":
            return .ended(await fetchProfile(mvpd.ID, requestor))
        case "authenticate":
            guard let code = body["code"]?.stringValue, let url = body["url"]?.stringValue else { break }
            if configuration.webView {
                loginFlow?.step = .redirect(code: code, mvpd: mvpd.ID)
                let useSVC = shared.withLock { $0.options.handleSVC }
                delegate.navigate(toUrl: client.absolute(url), useSVC: useSVC)
            } else {
                let notAfter = Self.millis(body["notAfter"]) ?? clock.nowMillis() + 1_800_000
                loginFlow?.step = .polling(code: code, mvpd: mvpd.ID)
                delegate.status(
                    AdvancedStatus(
                        id: "REGCODE", level: "info", message: "Enter the code on the activation page",
                        code: code, url: configuration.effectiveActivationURL, notAfter: notAfter))
                startPolling(code: code, mvpd: mvpd.ID, notAfter: notAfter, flowID: flowID, requestor: requestor)
            }
            return .started
        default:
            break
        }
        return .ended(loginFailure(.garbage, requestor, secondScreen: !configuration.webView))
    }

    /// A TempPass MVPD authenticates without a login page (adobe-pass-sdk-notes §2.16 seq. 9).
    func tempPassLogin(_ mvpd: MVPD, _ requestor: Requestor) async -> AuthenticationStatus {
        let result = await requestor.client(for: mvpd.ID).call(
            "POST", "/api/v2/\(FormEncoding.escape(requestor.id))/sessions",
            form: [("mvpd", mvpd.ID), ("domainName", Self.domainName), ("redirectUrl", configuration.redirectURL)], headers: identityHeaders)
        if case .httpError(403, let error) = result, error?["code"]?.stringValue?.hasPrefix("temporary_access") == true {
            return loginFailed(
                ErrorCode.userNotAuthenticated, requestor, status: AdvancedStatus(id: "N111", level: "warning", message: "TempPass expired"))
        }
        guard case .ok = result else { return loginFailure(result, requestor) }
        return await fetchProfile(mvpd.ID, requestor)
    }

    /// `GET profiles/{mvpd}` after the backend said a profile exists; ends the flow.
    func fetchProfile(_ mvpdID: String, _ requestor: Requestor) async -> AuthenticationStatus {
        let flowID = loginFlow?.id
        let result = await requestor.client(for: mvpdID).call(
            "GET", "/api/v2/\(FormEncoding.escape(requestor.id))/profiles/\(FormEncoding.escape(mvpdID))", headers: identityHeaders)
        guard loginFlow?.id == flowID else { return lastCompleted ?? .failed(ErrorCode.providerNotSelected) }
        if case .ok(let body) = result, let profile = Profile.first(in: body, preferring: mvpdID) {
            return await loginSucceeded(profile, requestor)
        }
        if case .httpError(403, let error) = result, error?["code"]?.stringValue?.hasPrefix("temporary_access") == true {
            return loginFailed(
                ErrorCode.userNotAuthenticated, requestor, status: AdvancedStatus(id: "N111", level: "warning", message: "TempPass expired"))
        }
        if case .ok = result { return loginFailed(ErrorCode.genericAuthentication, requestor) }
        return loginFailure(result, requestor)
    }

    // MARK: handleExternalURL (adobe-pass-sdk-notes §2.7)

    func handleExternalURL() async -> AuthenticationStatus {
        if logoutFlow != nil {
            return finishLogout()
        }
        if let flow = loginFlow {
            let requestor = flow.requestor
            switch flow.step {
            case .redirect(let code, let mvpd):
                loginFlow?.step = .completing
                return await completeLogin(code: code, mvpd: mvpd, flowID: flow.id, requestor: requestor)
            case .completing:
                return await withCheckedContinuation { loginFlow?.waiters.append($0) }
            case .partner, .picker, .polling:
                // No login page is open yet: nothing to complete, and no callback, since the flow's own
                // setAuthenticationStatus is still to come. The answer is the current state.
                return (try? await currentProfile(requestor)) != nil ? .authenticated : .failed(ErrorCode.userNotAuthenticated)
            }
        }
        if let lastCompleted { return lastCompleted }
        guard let requestor = inForce else {
            return report(.failed(ErrorCode.genericAuthentication), requestor: nil, profile: nil, cached: false)
        }
        let current: Profile?
        do {
            current = try await currentProfile(requestor)
        } catch {
            return report(.failed(ErrorCode.genericAuthentication), requestor: nil, profile: nil, cached: false, status: storeFailure(error))
        }
        let outcome: AuthenticationStatus = current != nil ? .authenticated : .failed(ErrorCode.userNotAuthenticated)
        delegate.setAuthenticationStatus(outcome.status, errorCode: outcome.errorCode)
        return outcome
    }

    /// Reads the profile the session created (`profiles/code/{code}`), retrying briefly while it is not there yet.
    private func completeLogin(code: String, mvpd: String, flowID: Int, requestor: Requestor) async -> AuthenticationStatus {
        let client = requestor.client(for: mvpd)
        let path = "/api/v2/\(FormEncoding.escape(requestor.id))/profiles/code/\(FormEncoding.escape(code))"
        for attempt in 0..<4 {
            let result = await client.call("GET", path)
            guard loginFlow?.id == flowID else { return lastCompleted ?? .failed(ErrorCode.providerNotSelected) }
            guard case .ok(let body) = result else { return loginFailure(result, requestor) }
            if let profile = Profile.first(in: body, preferring: mvpd) { return await loginSucceeded(profile, requestor) }
            if attempt < 3 { try? await Task.sleep(for: .milliseconds(500)) }
        }
        return loginFailed(ErrorCode.genericAuthentication, requestor)
    }

    // MARK: second screen (DESIGN §4)

    private func startPolling(code: String, mvpd: String, notAfter: Int64, flowID: Int, requestor: Requestor) {
        let interval = configuration.pollInterval
        pollTask = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard await self.pollOnce(code: code, mvpd: mvpd, notAfter: notAfter, flowID: flowID, requestor: requestor) else { return }
            }
        }
    }

    /// One poll; false when polling is over.
    private func pollOnce(code: String, mvpd: String, notAfter: Int64, flowID: Int, requestor: Requestor) async -> Bool {
        guard loginFlow?.id == flowID, case .polling = loginFlow?.step else { return false }
        if clock.nowMillis() >= notAfter {
            _ = loginFailed(ErrorCode.genericAuthentication, requestor, status: AdvancedStatus(id: "N130", level: "error", message: "The authentication code expired"))
            return false
        }
        let result = await requestor.client(for: mvpd).call(
            "GET", "/api/v2/\(FormEncoding.escape(requestor.id))/profiles/code/\(FormEncoding.escape(code))")
        guard loginFlow?.id == flowID, case .polling = loginFlow?.step else { return false }
        switch result {
        case .ok(let body):
            if let profile = Profile.first(in: body, preferring: mvpd) {
                _ = await loginSucceeded(profile, requestor)
                return false
            }
            return true
        case .httpError(let status, _) where status == 400 || status == 403 || status == 404:
            _ = loginFailed(ErrorCode.genericAuthentication, requestor)
            return false
        case .registration, .store:
            _ = loginFailure(result, requestor)
            return false
        default:
            return true  // transient: keep polling until the code expires
        }
    }

    // MARK: cancel

    /// Sticky: calls waiting for setRequestor, and every call made afterwards, end without waiting on the host.
    func cancel() async {
        cancelled = true
        let waiting = queued
        queued = []
        for continuation in waiting { continuation.resume() }
        if let flow = loginFlow {
            switch flow.step {
            case .partner, .picker, .redirect, .polling:
                _ = loginFailed(
                    ErrorCode.providerNotSelected, flow.requestor,
                    status: AdvancedStatus(id: "N005", level: "info", message: "The provider selection was cancelled"))
            case .completing:
                break
            }
        }
        if logoutFlow != nil { _ = finishLogout() }
    }

    /// Epoch ms from a number or a numeric string (sessions send strings, profiles numbers).
    static func millis(_ value: JSON?) -> Int64? {
        value?.int64Value ?? value?.stringValue.flatMap { Int64($0) }
    }
}
