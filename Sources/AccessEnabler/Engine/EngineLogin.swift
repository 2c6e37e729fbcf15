import FoundationEssentials
import JSON
import Synchronization
import ThreadAffinity

extension Engine {
    // MARK: getAuthentication

    public func getAuthentication(forceAuthn: Bool, data: JSONObject?, filter: ProviderFilter?) async -> AuthenticationStatus {
        let turn = await ready(.getAuthentication)
        defer { endTurn(turn) }
        guard let requestor = turn.requestor else {
            return report(.failed(SDKErrorCode.genericAuthentication), requestor: nil, profile: nil, cached: false)
        }
        identityHeaders = TempPassIdentity.headers(data)
        // A login in progress is joined at once, without reading the store first: the host could end that login
        // during the read, and this call would then open a dialog of its own.
        if machine.login != nil { return await login(requestor, filter: filter, turn: turn) }
        var current: Profile?
        do {
            current = try await currentProfile(requestor, fresh: true)
            if current == nil, !forceAuthn { current = try await singleSignOnProfile(requestor) }
        } catch {
            return report(
                .failed(SDKErrorCode.genericAuthentication), requestor: requestor, profile: nil, cached: false, status: storeFailure(error))
        }
        if !forceAuthn, let profile = current {
            let stands = profile.isPartner ? await partnerAuthenticationCheck(requestor, profile: profile).valid : true
            if stands {
                return report(.authenticated, requestor: requestor, profile: profile, cached: true)
            }
        }
        return await login(requestor, filter: filter, turn: turn)
    }

    /// Starts (or joins) the login flow and waits for its end; the call's `turn` ends once the machine has taken
    /// the login (started, joined or refused), since what follows waits on the host.
    /// `filter` narrows the platform's picker only; the provider dialog lists every MVPD (as the SDK does).
    ///
    /// The calling task's cancellation (the host's `$/cancelRequest`) is the user's cancel: while the login waits
    /// on the host it ends as `setSelectedProvider(nil)` ends it, for every call it answers; a call cancelled
    /// before it asked for a login ends alone with that outcome, without starting or joining one.
    func login(_ requestor: Requestor, filter: ProviderFilter?, turn: Turn) async -> AuthenticationStatus {
        if Task.isCancelled {
            return report(.failed(SDKErrorCode.providerNotSelected), requestor: requestor, profile: nil, cached: false, status: Self.n005)
        }
        let partner = partnerApplies(requestor)
        let awaited = AwaitedFlow()
        return await withTaskCancellationHandler {
            await waitForLogin(requestor, filter: filter, turn: turn, partner: partner, awaited: awaited)
        } onCancel: {
            after(.zero) { engine in engine.cancelLogin(flow: awaited.id) }
        }
    }

    private func waitForLogin(
        _ requestor: Requestor, filter: ProviderFilter?, turn: Turn, partner: Bool, awaited: AwaitedFlow
    ) async -> AuthenticationStatus {
        await withCheckedContinuation { continuation in
            defer { awaited.id = machine.login?.id }
            switch machine.loginRequested(requestor, continuation, partner: partner, hasProviders: !requestor.mvpds.isEmpty) {
            case .joined:
                break
            case .showProviderDialog:
                delegate.displayProviderDialog(requestor.mvpds)
            case .startPartnerLogin(let flow):
                Task { await self.partnerLogin(requestor, mvpds: requestor.mvpds, filter: filter, flowID: flow) }
            case .refused(let waiter, cancelled: true):
                let outcome = report(
                    .failed(SDKErrorCode.providerNotSelected), requestor: requestor, profile: nil, cached: false, status: Self.n005)
                waiter.resume(returning: outcome)
            case .refused(let waiter, cancelled: false):
                // No MVPD to pick from (Adobe's "iOS/tvOS API Reference", errors: no providers are available).
                waiter.resume(
                    returning: report(.failed(SDKErrorCode.providerNotAvailable), requestor: requestor, profile: nil, cached: false))
            }
            endTurn(turn, waitsOnHost: true)
        }
    }

    static var n005: AdvancedStatus { AdvancedStatus(id: "N005", level: "info", message: "The provider selection was cancelled") }

    /// A call waiting on login `flow` was cancelled: the login ends with the cancel outcome when it is still the
    /// current one and waits on the host (not when it is being completed at the backend, which ends it anyway).
    func cancelLogin(flow: Int?) {
        checkThread()
        guard let flow, let requestor = machine.cancellableLogin(flow: flow) else { return }
        _ = loginFailed(SDKErrorCode.providerNotSelected, requestor, status: Self.n005)
    }

    /// Ends the login flow: callbacks first, then every waiter gets the outcome, with the reasons raised in the
    /// flow and `status`. Returns that outcome.
    @discardableResult
    func finishLogin(
        _ outcome: AuthenticationStatus, requestor: Requestor?, profile: Profile?, status: AdvancedStatus? = nil
    ) -> AuthenticationStatus {
        if outcome.status != AccessEnablerStatus.success, let requestor { select(nil, requestor) }
        let explained = report(outcome, requestor: requestor, profile: profile, cached: false, status: status, ofLogin: true)
        let end = machine.loginEnded(explained)
        if end.stopPolling { stopPolling() }
        for waiter in end.resume { waiter.resume(returning: explained) }
        if end.stopPolling { checkPendingLoginChange() }
        return explained
    }

    /// Stores a new profile (durably, before any callback) and ends the flow (or reports, when there is none)
    /// with success; a failed write ends it with "Generic Authentication Error" and status STORE500.
    func loginSucceeded(_ profile: Profile, _ requestor: Requestor) async -> AuthenticationStatus {
        let flowID = machine.login?.id
        do {
            try await saveProfile(profile, requestor)
        } catch {
            let status = storeFailure(error)
            if let stale = machine.staleOutcome(of: flowID) { return stale }
            return loginFailed(SDKErrorCode.genericAuthentication, requestor, status: status)
        }
        // The flow may have been ended (cancelled) while the profile was written: the login stands, unreported.
        if let stale = machine.staleOutcome(of: flowID) { return stale }
        select(requestor.mvpd(profile.mvpd), requestor)
        let status: AdvancedStatus? =
            if profile.isTemporary {
                AdvancedStatus(id: "N011", level: "info", message: "Authenticated with TempPass")
            } else if profile.isDegraded {
                AdvancedStatus(id: "N010", level: "warning", message: "Authenticated under an authenticate-all degradation rule")
            } else {
                nil
            }
        return finishLogin(.authenticated, requestor: requestor, profile: profile, status: status)
    }

    /// Ends the flow (or reports, when there is none) with a failure.
    func loginFailed(_ code: String, _ requestor: Requestor?, status: AdvancedStatus? = nil) -> AuthenticationStatus {
        finishLogin(.failed(code), requestor: requestor, profile: nil, status: status)
    }

    /// The failure a backend answer means for a login (Adobe's "iOS/tvOS API Reference": getAuthentication).
    func loginFailure(_ result: APIResult, _ requestor: Requestor, secondScreen: Bool = false) -> AuthenticationStatus {
        let regStatus = secondScreen ? AdvancedStatus(id: "REG500", level: "error", message: "No authentication code") : nil
        switch result {
        case .transport:
            return loginFailed(SDKErrorCode.providerNotAvailable, requestor, status: regStatus)
        case .registration:
            return loginFailed(
                SDKErrorCode.genericAuthentication, requestor,
                status: AdvancedStatus(id: "R401", level: "error", message: "No access token"))
        case .store(let error):
            return loginFailed(SDKErrorCode.genericAuthentication, requestor, status: storeFailure(error))
        case .throttled, .garbage, .httpError, .ok:
            return loginFailed(SDKErrorCode.internalAuthentication, requestor, status: regStatus)
        }
    }

    // MARK: setSelectedProvider (Adobe's "iOS/tvOS API Reference": setSelectedProvider; never queued)

    public func setSelectedProvider(_ mvpdID: String?) async -> SelectionOutcome {
        machine.unqueuedCall(1)
        defer { unqueuedCallReturned() }
        let cancelStatus = Self.n005
        guard let requestor = machine.login?.requestor ?? inForce else {
            return .ended(loginFailed(SDKErrorCode.providerNotSelected, nil, status: mvpdID == nil ? cancelStatus : nil))
        }
        guard let mvpdID else {
            return .ended(loginFailed(SDKErrorCode.providerNotSelected, requestor, status: cancelStatus))
        }
        guard let mvpd = requestor.mvpd(mvpdID) else {
            return .ended(
                loginFailed(SDKErrorCode.providerNotSelected, requestor, status: Self.unknownMVPD(mvpdID, offered: requestor.mvpds)))
        }
        let pick = machine.providerPicked(tempPass: mvpd.isTempPass)
        if pick.stopPolling { stopPolling() }
        select(mvpd, requestor)
        delegate.sendTrackingData([mvpd.ID] + requestor.trackingTail, forEventType: TrackingEvent.selectedProvider)
        if mvpd.isTempPass {
            return .ended(await tempPassLogin(mvpd, requestor))
        }
        guard let flowID = pick.createSession else { return .started }
        let client = requestor.client(for: mvpd.ID)
        let answer = await call(createSession(mvpd.ID, requestor), with: client, flow: flowID)
        if let stale = machine.staleOutcome(of: flowID) { return .ended(stale) }
        guard let session = answer.value else {
            return .ended(loginFailure(answer.result, requestor, secondScreen: !configuration.webView))
        }
        switch session.action {
        case .authorize:
            return .ended(await fetchProfile(mvpd.ID, requestor))
        case .authenticate where configuration.webView:
            guard let code = session.code, let url = session.url else { break }
            _ = machine.sessionOpened(flow: flowID, .page(code: code, mvpd: mvpd.ID))
            let useSVC = shared.withLock { $0.options.useSVC(for: mvpd) }
            delegate.navigate(toUrl: client.absolute(url), useSVC: useSVC)
            return .started
        case .authenticate,
            .other("resume") where !configuration.webView:
            // A second screen: `resume` is the answer to a session created without a redirect URL (the
            // second-screen page or the authenticate page supplies the rest); either way the code is what counts.
            guard let code = session.code else { break }
            let notAfter = session.notAfter ?? clock.nowMillis() + 1_800_000
            let polls = machine.sessionOpened(flow: flowID, .secondScreen(code: code, mvpd: mvpd.ID))
            delegate.status(regcode(code: code, notAfter: notAfter, requestor: requestor, client: client))
            if polls { startPolling(code: code, mvpd: mvpd.ID, notAfter: notAfter, flowID: flowID, requestor: requestor) }
            return .started
        case .authenticate, .partnerProfile, .other:
            break
        }
        return .ended(loginFailure(.garbage, requestor, secondScreen: !configuration.webView))
    }

    /// A TempPass MVPD authenticates without a login page (Adobe's "iOS/tvOS API Reference": TempPass).
    func tempPassLogin(_ mvpd: MVPD, _ requestor: Requestor) async -> AuthenticationStatus {
        let answer = await call(createSession(mvpd.ID, requestor), with: requestor.client(for: mvpd.ID), flow: machine.login?.id)
        if case .httpError(403, _) = answer.result, answer.error?.meansTempPassOver == true {
            return loginFailed(
                SDKErrorCode.userNotAuthenticated, requestor,
                status: AdvancedStatus(id: "N111", level: "warning", message: "TempPass expired"))
        }
        guard case .ok = answer.result else { return loginFailure(answer.result, requestor) }
        return await fetchProfile(mvpd.ID, requestor)
    }

    /// `POST sessions` for `mvpdID`, with the TempPass identity of the login. A second-screen host sends its
    /// redirect URL only when it is an http(s) page: the browser that ends there is the phone's, which cannot open
    /// the TV app's scheme (`adobepass://…`). Without one, REST API V2 answers `resume` (the session lacks
    /// `redirectUrl`), and the page that sends the phone to the authenticate URL completes it (Protocol/README.md,
    /// "Second screen").
    private func createSession(_ mvpdID: String, _ requestor: Requestor) -> Endpoint<SessionAnswer> {
        RESTV2.createSession(requestor.id, mvpd: mvpdID, redirectURL: sessionRedirectURL, identity: identityHeaders)
    }

    /// The `redirectUrl` of the login's session: the host's redirect URL, except a custom scheme on a second-screen host.
    private var sessionRedirectURL: String? {
        let redirect = configuration.redirectURL
        if configuration.webView { return redirect }
        let scheme = redirect.prefix { $0 != ":" }.lowercased()
        return scheme == "http" || scheme == "https" ? redirect : nil
    }

    /// The REGCODE status of second-screen code `code` (Protocol/README.md, "Second screen"): `authenticateUrl` on
    /// the MVPD's backend, `activationUrl` when the application configured one, and `url`, the one to show.
    private func regcode(code: String, notAfter: Int64, requestor: Requestor, client: RestClient) -> AdvancedStatus {
        let authenticate = client.absolute(RESTV2.authenticatePath(requestor.id, code: code))
        let shown = configuration.activationPage(code: code) ?? authenticate
        return AdvancedStatus(
            id: "REGCODE", level: "info",
            message: configuration.activationURL == nil
                ? "Open the URL on another device to sign in" : "Enter the code on the activation page",
            code: code, url: shown, authenticateURL: authenticate, activationURL: configuration.activationURL, notAfter: notAfter)
    }

    /// `GET profiles/{mvpd}` after the backend said a profile exists; ends the flow.
    func fetchProfile(_ mvpdID: String, _ requestor: Requestor) async -> AuthenticationStatus {
        let flowID = machine.login?.id
        let answer = await call(
            RESTV2.profile(requestor.id, mvpd: mvpdID, headers: identityHeaders), with: requestor.client(for: mvpdID), flow: flowID)
        if let stale = machine.staleOutcome(of: flowID) { return stale }
        if let profile = answer.value?.first(preferring: mvpdID) {
            return await loginSucceeded(profile, requestor)
        }
        if case .httpError(403, _) = answer.result, answer.error?.meansTempPassOver == true {
            return loginFailed(
                SDKErrorCode.userNotAuthenticated, requestor,
                status: AdvancedStatus(id: "N111", level: "warning", message: "TempPass expired"))
        }
        if case .ok = answer.result { return loginFailed(SDKErrorCode.genericAuthentication, requestor) }
        return loginFailure(answer.result, requestor)
    }

    /// A call that takes no turn returns: a login change that arrived meanwhile is checked once its response is out.
    private func unqueuedCallReturned() {
        machine.unqueuedCall(-1)
        checkPendingLoginChange()
    }

    // MARK: handleExternalURL (Adobe's "iOS/tvOS API Reference": handleExternalURL)

    func handleExternalURL() async -> AuthenticationStatus {
        machine.unqueuedCall(1)
        defer { unqueuedCallReturned() }
        switch machine.redirected() {
        case .endLogout:
            return finishLogout()
        case .completeLogin(let flow, let code, let mvpd, let requestor):
            return await completeLogin(code: code, mvpd: mvpd, flowID: flow, requestor: requestor)
        case .join:
            return await withCheckedContinuation { waiter in
                if let outcome = machine.joined(waiter) { waiter.resume(returning: outcome) }
            }
        case .answerStoredState(let requestor):
            // No login page is open yet: nothing to complete, and no callback, since the login's own
            // setAuthenticationStatus is still to come. The answer is the current state.
            return (try? await currentProfile(requestor)) != nil ? .authenticated : .failed(SDKErrorCode.userNotAuthenticated)
        case .answer(let outcome):
            return outcome
        case .reportStoredState(let requestor):
            return await reportStoredState(requestor)
        }
    }

    /// handleExternalURL with no flow: setAuthenticationStatus with the stored state.
    private func reportStoredState(_ requestor: Requestor?) async -> AuthenticationStatus {
        guard let requestor else {
            return report(.failed(SDKErrorCode.genericAuthentication), requestor: nil, profile: nil, cached: false)
        }
        let current: Profile?
        do {
            current = try await currentProfile(requestor)
        } catch {
            return report(
                .failed(SDKErrorCode.genericAuthentication), requestor: nil, profile: nil, cached: false, status: storeFailure(error))
        }
        let outcome: AuthenticationStatus = current != nil ? .authenticated : .failed(SDKErrorCode.userNotAuthenticated)
        announce(outcome.status, errorCode: outcome.errorCode)
        return outcome
    }

    /// Reads the profile the session created (`profiles/code/{code}`), retrying briefly while it is not there yet.
    private func completeLogin(code: String, mvpd: String, flowID: Int, requestor: Requestor) async -> AuthenticationStatus {
        let client = requestor.client(for: mvpd)
        let endpoint = RESTV2.profile(requestor.id, code: code)
        for attempt in 0..<4 {
            let answer = await call(endpoint, with: client, flow: flowID)
            if let stale = machine.staleOutcome(of: flowID) { return stale }
            guard case .ok = answer.result else { return loginFailure(answer.result, requestor) }
            if let profile = answer.value?.first(preferring: mvpd) { return await loginSucceeded(profile, requestor) }
            if attempt < 3 { await uncancelledSleep(for: .milliseconds(500), on: executor) }
        }
        return loginFailed(SDKErrorCode.genericAuthentication, requestor)
    }

    // MARK: second screen (Protocol/README.md)

    private func startPolling(code: String, mvpd: String, notAfter: Int64, flowID: Int, requestor: Requestor) {
        pollGenerations += 1
        poll = SecondScreenPoll(
            generation: pollGenerations, code: code, mvpd: mvpd, notAfter: notAfter, flowID: flowID, requestor: requestor,
            lastCountdown: clock.nowMillis())
        armPoll(pollGenerations)
    }

    /// The next poll of second screen `generation`, one poll interval from now (a timer of the engine's executor).
    private func armPoll(_ generation: Int) {
        after(configuration.pollInterval) { engine in
            guard engine.poll?.generation == generation else { return }
            Task.immediate { await engine.pollAndRearm(generation) }
        }
    }

    private func pollAndRearm(_ generation: Int) async {
        guard let current = poll, current.generation == generation else { return }
        var reachable = current.reachable
        let more = await pollOnce(
            code: current.code, mvpd: current.mvpd, notAfter: current.notAfter, flowID: current.flowID, requestor: current.requestor,
            reachable: &reachable)
        guard poll?.generation == generation else { return }
        poll?.reachable = reachable
        if more {
            countdown()
            armPoll(generation)
        } else {
            poll = nil
        }
    }

    /// Status REG100 (info) for the second screen being polled, once `countdownInterval` has passed by the engine's
    /// clock since its REGCODE or its last REG100: `{code, notAfter, secondsLeft}`, so the host can show the time
    /// left. Never a reason of the outcome.
    private func countdown() {
        guard var current = poll else { return }
        let now = clock.nowMillis()
        let interval = configuration.countdownInterval.components
        let intervalMillis = interval.seconds * 1000 + interval.attoseconds / 1_000_000_000_000_000
        guard now - current.lastCountdown >= intervalMillis, now < current.notAfter else { return }
        current.lastCountdown = now
        poll = current
        let left = (current.notAfter - now) / 1000
        delegate.status(
            AdvancedStatus(
                id: "REG100", level: "info", message: "Waiting for the sign-in on the other device: \(left) s left",
                code: current.code, notAfter: current.notAfter, secondsLeft: left))
    }

    /// One poll; false when polling is over. `reachable`: whether the last poll reached the backend (a poll that
    /// fails on the network after one that did not sends status REG503, a reason of the login's outcome).
    private func pollOnce(
        code: String, mvpd: String, notAfter: Int64, flowID: Int, requestor: Requestor, reachable: inout Bool
    ) async -> Bool {
        guard machine.isPolling(flowID) else { return false }
        if clock.nowMillis() >= notAfter {
            _ = loginFailed(SDKErrorCode.userNotAuthenticated, requestor, status: Self.n130)
            return false
        }
        let answer = await call(RESTV2.profile(requestor.id, code: code), with: requestor.client(for: mvpd), flow: flowID)
        guard machine.isPolling(flowID) else { return false }
        switch answer.result {
        case .ok:
            reachable = true
            if let profile = answer.value?.first(preferring: mvpd) {
                _ = await loginSucceeded(profile, requestor)
                return false
            }
            return true
        case .httpError(let status, _) where status == 400 || status == 403 || status == 404:
            // The backend's clock decides when the code is over (the emulator's may be moved ahead).
            if answer.error?.code == "invalid_authentication_session" {
                _ = loginFailed(SDKErrorCode.userNotAuthenticated, requestor, status: Self.n130)
            } else {
                _ = loginFailed(SDKErrorCode.genericAuthentication, requestor)
            }
            return false
        case .registration, .store:
            _ = loginFailure(answer.result, requestor)
            return false
        case .transport:
            if reachable {
                reachable = false
                raise(
                    AdvancedStatus(
                        id: "REG503", level: "warning", message: "The backend could not be reached to check the code; still trying"),
                    flow: flowID)
            }
            return true  // transient: keep polling until the code expires
        default:
            reachable = true
            return true
        }
    }

    static var n130: AdvancedStatus { AdvancedStatus(id: "N130", level: "error", message: "The authentication code expired") }

    /// `PB404`, the daemon's status for an id that is not one of the requestor's MVPDs (the provider dialog offers
    /// them all), naming the offered id near it, if any (`Text.near`).
    static func unknownMVPD(_ mvpdId: String, offered: [MVPD]) -> AdvancedStatus? {
        guard !offered.isEmpty else { return nil }
        let ids = offered.map(\.ID)
        var message = "No MVPD '\(Text.excerpt(mvpdId))' in the provider dialog"
        if let near = Text.near(mvpdId, in: ids) { message += "; did you mean '\(near)'?" }
        return AdvancedStatus(id: "PB404", level: "error", message: message, details: "The dialog offered: \(ids.joined(separator: ", "))")
    }

    // MARK: cancel

    /// Sticky: calls waiting for setRequestor, and every call made afterwards, end without waiting on the host.
    public func cancel() async {
        checkThread()
        let cancel = machine.cancel()
        cancel.run?.resume()
        if let requestor = cancel.cancelLogin { _ = loginFailed(SDKErrorCode.providerNotSelected, requestor, status: Self.n005) }
        if cancel.endLogout { _ = finishLogout() }
    }

    // MARK: timers

    /// Forgets the second screen being polled: its pending poll timer does nothing when it fires.
    func stopPolling() { poll = nil }

    /// Ends logout page `flow` after the logout timeout, unless it ended before (the machine knows).
    func startLogoutTimer(flow: Int) {
        after(configuration.logoutTimeout) { $0.endLogout(flow: flow) }
    }

    /// Ends the logout page `flow` (any, when nil): setAuthenticationStatus(0, "User Not Authenticated Error"), then
    /// VSA203 when it logged out a partner profile, then its waiters get the outcome.
    func endLogout(flow: Int?) {
        checkThread()
        guard let end = machine.logoutEnded(flow: flow) else { return }
        announce(end.outcome.status, errorCode: end.outcome.errorCode)
        if end.partner { delegate.status(Self.vsa203) }
        for waiter in end.resume { waiter.resume(returning: end.outcome) }
        checkPendingLoginChange()
    }
}

/// A second screen being polled (`Engine.poll`): the code and where it came from, and whether the last poll
/// reached the backend (the first failure after a success sends REG503).
struct SecondScreenPoll {
    let generation: Int
    let code: String
    let mvpd: String
    /// The code's expiry, epoch milliseconds.
    let notAfter: Int64
    let flowID: Int
    let requestor: Requestor
    var reachable = true
    /// When the REGCODE or the last REG100 was sent, epoch ms by the engine's clock.
    var lastCountdown: Int64
}

/// The flow a call waits on, read by its cancellation handler: written and read on the engine's executor only
/// (the lock is there because the handler's closure must be `Sendable`).
final class AwaitedFlow: Sendable {
    private let flow = Mutex<Int?>(nil)

    var id: Int? {
        get { flow.withLock { $0 } }
        set { flow.withLock { $0 = newValue } }
    }
}
