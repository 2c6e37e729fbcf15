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
        let identity = TempPassIdentity.headers(data)
        // A login in progress is joined at once, without reading the store first: the host could end that login
        // during the read, and this call would then open a dialog of its own.
        if machine.login != nil { return await login(requestor, filter: filter, identity: identity, turn: turn) }
        machine.identityGiven(identity)
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
        return await login(requestor, filter: filter, identity: identity, turn: turn)
    }

    /// Starts (or joins) the login flow and waits for its end; the call's `turn` ends once the machine has taken
    /// the login (started, joined or refused), since what follows waits on the host.
    /// `filter` narrows the platform's picker only; the provider dialog lists every MVPD (as the SDK does).
    /// `identity`: the TempPass identity of the call's `data`, the login's if it starts one.
    ///
    /// The calling task's cancellation (the host's `$/cancelRequest`) is the user's cancel: while the login waits
    /// on the host it ends as `setSelectedProvider(nil)` ends it, for every call it answers; a call cancelled
    /// before it asked for a login ends alone with that outcome, without starting or joining one.
    func login(_ requestor: Requestor, filter: ProviderFilter?, identity: [(String, String)], turn: Turn) async -> AuthenticationStatus {
        if Task.isCancelled {
            return report(.failed(SDKErrorCode.providerNotSelected), requestor: requestor, profile: nil, cached: false, status: Self.n005)
        }
        let partner = partnerApplies(requestor)
        let awaited = AwaitedFlow()
        return await withTaskCancellationHandler {
            await waitForLogin(requestor, filter: filter, identity: identity, turn: turn, partner: partner, awaited: awaited)
        } onCancel: {
            after(.zero) { engine in engine.cancelLogin(flow: awaited.id) }
        }
    }

    private func waitForLogin(
        _ requestor: Requestor, filter: ProviderFilter?, identity: [(String, String)], turn: Turn, partner: Bool, awaited: AwaitedFlow
    ) async -> AuthenticationStatus {
        await withCheckedContinuation { continuation in
            defer { awaited.id = machine.login?.id }
            let request = machine.loginRequested(
                requestor, continuation, partner: partner, hasProviders: !requestor.mvpds.isEmpty, identity: identity)
            switch request {
            case .joined:
                break
            case .showProviderDialog:
                delegate.displayProviderDialog(requestor.mvpds)
            case .startPartnerLogin(let flow):
                Task(executorPreference: executor) {
                    await self.partnerLogin(requestor, mvpds: requestor.mvpds, filter: filter, flowID: flow)
                }
            case .refused(let waiter, cancelled: true):
                let outcome = report(
                    .failed(SDKErrorCode.providerNotSelected), requestor: requestor, profile: nil, cached: false, status: Self.closedN005)
                waiter.resume(returning: outcome)
            case .refused(let waiter, cancelled: false):
                // No MVPD to pick from (Adobe's "iOS/tvOS API Reference", errors: no providers are available).
                waiter.resume(
                    returning: report(.failed(SDKErrorCode.providerNotAvailable), requestor: requestor, profile: nil, cached: false))
            }
            endTurn(turn, waitsOnHost: true)
        }
    }

    static var n005: AdvancedStatus { AdvancedStatus(.n005) }
    /// N005 of a login ended because its instance closed, not by the user (Protocol/README.md, Lifecycle 5).
    static var closedN005: AdvancedStatus {
        AdvancedStatus(.n005, details: "the instance closed: its connection ended, or the daemon is stopping")
    }

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
        dismissPlatformPicker(of: machine.login?.id)
        if outcome.status != AccessEnablerStatus.success, let requestor { select(nil, requestor) }
        let explained = report(outcome, requestor: requestor, profile: profile, cached: false, status: status, ofLogin: true)
        let end = machine.loginEnded(explained)
        end.stopPolling?.cancel()
        for waiter in end.resume { waiter.resume(returning: explained) }
        if end.ended { checkPendingLoginChange() }
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
                AdvancedStatus(.n011)
            } else if profile.isDegraded {
                AdvancedStatus(.n010)
            } else {
                nil
            }
        return finishLogin(.authenticated, requestor: requestor, profile: profile, status: status)
    }

    /// The backend says the device's TempPass has run out: the login ends with N111.
    func tempPassOver(_ requestor: Requestor) -> AuthenticationStatus {
        loginFailed(SDKErrorCode.userNotAuthenticated, requestor, status: AdvancedStatus(.n111))
    }

    /// Ends the flow (or reports, when there is none) with a failure.
    func loginFailed(_ code: String, _ requestor: Requestor?, status: AdvancedStatus? = nil) -> AuthenticationStatus {
        finishLogin(.failed(code), requestor: requestor, profile: nil, status: status)
    }

    /// The failure a backend answer means for a login (Adobe's "iOS/tvOS API Reference": getAuthentication).
    /// `backend`: the one asked, named in CFG404's details.
    func loginFailure(
        _ result: APIResult, _ requestor: Requestor, backend: BackendURL, secondScreen: Bool = false
    ) -> AuthenticationStatus {
        let regStatus = secondScreen ? AdvancedStatus(.reg500) : nil
        switch result {
        case .transport(.insecure):
            return loginFailed(SDKErrorCode.providerNotAvailable, requestor, status: AdvancedStatus(.sec420))
        case .transport:
            let unreachable = AdvancedStatus(
                .cfg404, message: "No whole answer from the backend: the login did not go through",
                details: "\(backend.base) could not be reached")
            return loginFailed(SDKErrorCode.providerNotAvailable, requestor, status: regStatus ?? unreachable)
        case .registration:
            return loginFailed(
                SDKErrorCode.genericAuthentication, requestor,
                status: AdvancedStatus(.r401))
        case .store(let error):
            return loginFailed(SDKErrorCode.genericAuthentication, requestor, status: storeFailure(error))
        case .throttled, .garbage, .httpError, .ok:
            // An answer the login cannot use: the SDK's internal error (N500; REG500 on a second screen), with the
            // backend's words when it gave an error object, as a refused decision's Z500 has them.
            let error = result.enhancedError
            let said = AdvancedStatus(
                secondScreen ? .reg500 : .n500, message: error?.message, details: error?.details.isEmpty == false ? error?.details : nil)
            return loginFailed(SDKErrorCode.internalAuthentication, requestor, status: said)
        }
    }

    // MARK: setSelectedProvider (Adobe's "iOS/tvOS API Reference": setSelectedProvider)

    /// Completes the login in progress at once. With none in progress while a setRequestor is in flight, it waits
    /// its turn among the `WaitingCall`s (Protocol/README.md, Lifecycle 3): with no requestor in force yet, the id
    /// could not be checked, and the pick would end as a cancel ("Provider not Selected Error"). Such a pick
    /// cancelled while it waited (`$/cancelRequest`), or whose instance closed or was replaced meanwhile (its turn
    /// has no requestor), ends alone and reaches no backend, as the queued calls do.
    public func setSelectedProvider(_ mvpdID: String?) async -> SelectionOutcome {
        if machine.login == nil, machine.configuringNow {
            let turn = await ready(nil)
            defer { endTurn(turn) }
            if Task.isCancelled {
                return .ended(loginFailed(SDKErrorCode.providerNotSelected, turn.requestor, status: Self.n005))
            }
            return await pick(mvpdID, under: machine.login?.requestor ?? turn.requestor)
        }
        machine.unqueuedCall(1)
        defer { unqueuedCallReturned() }
        return await pick(mvpdID, under: machine.login?.requestor ?? inForce)
    }

    private func pick(_ mvpdID: String?, under requestor: Requestor?) async -> SelectionOutcome {
        let cancelStatus = Self.n005
        guard let requestor else {
            return .ended(loginFailed(SDKErrorCode.providerNotSelected, nil, status: mvpdID == nil ? cancelStatus : nil))
        }
        guard let mvpdID else {
            return .ended(loginFailed(SDKErrorCode.providerNotSelected, requestor, status: cancelStatus))
        }
        guard let mvpd = requestor.mvpd(mvpdID) else {
            return .ended(
                loginFailed(
                    SDKErrorCode.providerNotSelected, requestor,
                    status: Self.unknownMVPD(mvpdID, offered: requestor.mvpds, dialogOpen: machine.login != nil)))
        }
        let pick = machine.providerPicked(tempPass: mvpd.isTempPass)
        pick.stopPolling?.cancel()
        dismissPlatformPicker(of: machine.login?.id)
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
            return .ended(loginFailure(answer.result, requestor, backend: client.baseURL, secondScreen: !configuration.webView))
        }
        switch session.action {
        case .authorize:
            return .ended(await fetchProfile(mvpd.ID, requestor))
        case .authenticate where configuration.webView:
            guard let code = session.code, let url = session.url else { break }
            machine.sessionOpened(flow: flowID, .page(code: code, mvpd: mvpd.ID)).stopPolling?.cancel()
            let useSVC = useSVC(for: mvpd)
            delegate.navigate(toUrl: client.absolute(url), useSVC: useSVC)
            return .started
        case .authenticate,
            .other("resume") where !configuration.webView:
            // A second screen: `resume` is the answer to a session created without a redirect URL (the
            // second-screen page or the authenticate page supplies the rest); either way the code is what counts.
            guard let code = session.code else { break }
            let notAfter = session.notAfter ?? clock.nowMillis() + 1_800_000
            let screen = Machine.SecondScreen(code: code, mvpd: mvpd.ID, notAfter: notAfter, sentAt: clock.nowMillis())
            let opened = machine.sessionOpened(flow: flowID, .secondScreen(screen))
            opened.stopPolling?.cancel()
            delegate.status(regcode(code: code, notAfter: notAfter, requestor: requestor, client: client))
            if opened.startPolling { armPoll(flow: flowID) }
            return .started
        case .partnerProfile, .other:
            break
        }
        return .ended(loginFailure(.garbage, requestor, backend: client.baseURL, secondScreen: !configuration.webView))
    }

    /// A TempPass MVPD authenticates without a login page (Adobe's "iOS/tvOS API Reference": TempPass).
    func tempPassLogin(_ mvpd: MVPD, _ requestor: Requestor) async -> AuthenticationStatus {
        let answer = await call(createSession(mvpd.ID, requestor), with: requestor.client(for: mvpd.ID), flow: machine.login?.id)
        if answer.error?.endsTempPass == true { return tempPassOver(requestor) }
        guard case .ok = answer.result else {
            return loginFailure(answer.result, requestor, backend: requestor.client(for: mvpd.ID).baseURL)
        }
        return await fetchProfile(mvpd.ID, requestor)
    }

    /// `POST sessions` for `mvpdID`, with the TempPass identity of the login. A second-screen host sends its
    /// redirect URL only when it is an http(s) page: the browser that ends there is the phone's, which cannot open
    /// the TV app's scheme (`adobepass://…`). Without one, REST API V2 answers `resume` (the session lacks
    /// `redirectUrl`), and the page that sends the phone to the authenticate URL completes it (Protocol/README.md,
    /// "Second screen").
    private func createSession(_ mvpdID: String, _ requestor: Requestor) -> Endpoint<SessionAnswer> {
        RESTV2.createSession(
            requestor.id, mvpd: mvpdID, redirectURL: sessionRedirectURL(requestor.mvpd(mvpdID)), identity: machine.tempPassIdentity)
    }

    /// The `redirectUrl` of the login's session: the host's redirect URL (`svcRedirectUrl` for a page the Safari View
    /// Controller opens), except a custom scheme on a second-screen host.
    private func sessionRedirectURL(_ mvpd: MVPD?) -> String? {
        let redirect = redirectURL(for: mvpd)
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
            .regcode,
            message: configuration.activationURL == nil
                ? "Open the URL on another device to sign in" : "Enter the code on the activation page",
            code: code, url: shown, authenticateURL: authenticate, activationURL: configuration.activationURL, notAfter: notAfter)
    }

    /// `GET profiles/{mvpd}` after the backend said a profile exists; ends the flow.
    func fetchProfile(_ mvpdID: String, _ requestor: Requestor) async -> AuthenticationStatus {
        let flowID = machine.login?.id
        let answer = await call(
            RESTV2.profile(requestor.id, mvpd: mvpdID, headers: machine.tempPassIdentity), with: requestor.client(for: mvpdID), flow: flowID
        )
        if let stale = machine.staleOutcome(of: flowID) { return stale }
        if let profile = answer.value?.first(preferring: mvpdID) {
            return await loginSucceeded(profile, requestor)
        }
        if answer.error?.endsTempPass == true { return tempPassOver(requestor) }
        if case .ok = answer.result {
            return loginFailed(
                SDKErrorCode.genericAuthentication, requestor,
                status: AdvancedStatus(.n130, message: "The backend has no profile for \(Text.excerpt(mvpdID)) on this device"))
        }
        return loginFailure(answer.result, requestor, backend: requestor.client(for: mvpdID).baseURL)
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
            guard case .ok = answer.result else { return loginFailure(answer.result, requestor, backend: client.baseURL) }
            if let profile = answer.value?.first(preferring: mvpd) { return await loginSucceeded(profile, requestor) }
            if attempt < 3 { await uncancelledSleep(for: .milliseconds(500), on: executor) }
        }
        // The page came back without a login behind it: walked away from, or its redirect handed over too early.
        return loginFailed(
            SDKErrorCode.genericAuthentication, requestor,
            status: AdvancedStatus(.n130, message: "The login page was not completed: the backend has no profile for its session"))
    }

    // MARK: second screen (Protocol/README.md)

    /// The next poll of login `flow`'s second screen, one poll interval from now: a timer of the engine's executor,
    /// kept by the machine with the second screen, so that whatever ends or moves the login on stops it.
    private func armPoll(flow: Int) {
        let timer = after(configuration.pollInterval) { engine in engine.pollDue(flow: flow) }
        if !machine.pollArmed(flow: flow, timer) { timer.cancel() }
    }

    /// The poll timer fired: one poll (its HTTP exchange in a task of the engine's executor, ARCHITECTURE.md
    /// "Unstructured tasks"), then the next one, a countdown due, or nothing when the login no longer polls.
    private func pollDue(flow: Int) {
        guard let screen = machine.pollDue(flow: flow), let requestor = machine.login?.requestor else { return }
        Task.immediate {
            guard await self.pollOnce(screen, flowID: flow, requestor: requestor), self.machine.isPolling(flow) else { return }
            self.countdown(flow: flow)
            self.armPoll(flow: flow)
        }
    }

    /// Status REG100 (info) for the second screen being polled, once `countdownInterval` has passed by the engine's
    /// clock since its REGCODE or its last REG100: `{code, notAfter, secondsLeft}`, so the host can show the time
    /// left. Never a reason of the outcome.
    private func countdown(flow: Int) {
        let now = clock.nowMillis()
        let interval = configuration.countdownInterval.components
        let intervalMillis = interval.seconds * 1000 + interval.attoseconds / 1_000_000_000_000_000
        guard let screen = machine.countdownDue(flow: flow, now: now, interval: intervalMillis) else { return }
        let left = (screen.notAfter - now) / 1000
        delegate.status(
            AdvancedStatus(
                .reg100, message: "Waiting for the sign-in on the other device: \(left) s left", code: screen.code,
                notAfter: screen.notAfter, secondsLeft: left))
    }

    /// One poll; false when polling is over. A poll that fails on the network after one that reached the backend
    /// sends status REG503, a reason of the login's outcome.
    private func pollOnce(_ screen: Machine.SecondScreen, flowID: Int, requestor: Requestor) async -> Bool {
        let (code, mvpd, notAfter) = (screen.code, screen.mvpd, screen.notAfter)
        guard machine.isPolling(flowID) else { return false }
        if clock.nowMillis() >= notAfter {
            _ = loginFailed(SDKErrorCode.userNotAuthenticated, requestor, status: Self.n130)
            return false
        }
        let answer = await call(RESTV2.profile(requestor.id, code: code), with: requestor.client(for: mvpd), flow: flowID)
        guard machine.isPolling(flowID) else { return false }
        switch answer.result {
        case .ok:
            machine.polled(flow: flowID, reachable: true)
            if let profile = answer.value?.first(preferring: mvpd) {
                _ = await loginSucceeded(profile, requestor)
                return false
            }
            return true
        case .httpError(let status, _) where status == 400 || status == 403 || status == 404:
            // The backend's clock decides when the code is over (the emulator's may be moved ahead).
            if answer.error?.known == .invalidAuthenticationSession {
                _ = loginFailed(SDKErrorCode.userNotAuthenticated, requestor, status: Self.n130)
            } else {
                _ = loginFailed(SDKErrorCode.genericAuthentication, requestor)
            }
            return false
        case .registration, .store:
            _ = loginFailure(answer.result, requestor, backend: requestor.client(for: mvpd).baseURL)
            return false
        case .transport:
            if machine.polled(flow: flowID, reachable: false) {
                raise(
                    AdvancedStatus(
                        .reg503),
                    flow: flowID)
            }
            return true  // transient: keep polling until the code expires
        default:
            machine.polled(flow: flowID, reachable: true)
            return true
        }
    }

    static var n130: AdvancedStatus { AdvancedStatus(.n130) }

    /// `PB404`, the daemon's status for an id that is not one of the requestor's MVPDs (the provider dialog offers
    /// them all; `dialogOpen`: a login waits at it), naming the offered id near it, if any (`Text.near`).
    static func unknownMVPD(_ mvpdId: String, offered: [MVPD], dialogOpen: Bool = true) -> AdvancedStatus? {
        guard !offered.isEmpty else { return nil }
        let ids = offered.map(\.ID)
        var message = "No MVPD '\(Text.excerpt(mvpdId))' " + (dialogOpen ? "in the provider dialog" : "among the requestor's MVPDs")
        if let near = Text.near(mvpdId, in: ids) { message += "; did you mean '\(near)'?" }
        let offer = dialogOpen ? "The dialog offered" : "The requestor's MVPDs"
        return AdvancedStatus(.pb404, message: message, details: "\(offer): \(ids.joined(separator: ", "))")
    }

    // MARK: cancel

    /// Sticky: calls waiting for setRequestor, and every call made afterwards, end without waiting on the host.
    public func cancel() async { closeInstance() }

    public nonisolated func close() { assumeIsolated { $0.closeInstance() } }

    public nonisolated func admit(_ call: CallAdmission) -> Admission { assumeIsolated { $0.machine.admit(call) } }

    private func closeInstance() {
        checkThread()
        let cancel = machine.cancel()
        cancel.run?.resume()
        if let requestor = cancel.cancelLogin { _ = loginFailed(SDKErrorCode.providerNotSelected, requestor, status: Self.closedN005) }
        if cancel.endLogout { _ = finishLogout() }
    }

    // MARK: timers

    /// Ends logout page `flow` after the logout timeout; the machine keeps the timer with the logout, whose end
    /// stops it.
    func startLogoutTimer(flow: Int) {
        let timer = after(configuration.logoutTimeout) { $0.endLogout(flow: flow) }
        if !machine.logoutTimerArmed(flow: flow, timer) { timer.cancel() }
    }

    /// Ends the logout page `flow` (any, when nil): setAuthenticationStatus(0, "User Not Authenticated Error"), then
    /// VSA203 when it logged out a partner profile, then its waiters get the outcome.
    func endLogout(flow: Int?) {
        checkThread()
        guard let end = machine.logoutEnded(flow: flow) else { return }
        end.stopLogoutTimer?.cancel()
        announce(end.outcome.status, errorCode: end.outcome.errorCode)
        if end.partner { delegate.status(Self.vsa203) }
        for waiter in end.resume { waiter.resume(returning: end.outcome) }
        checkPendingLoginChange()
    }
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
