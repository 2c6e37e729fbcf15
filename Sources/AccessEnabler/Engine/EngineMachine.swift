import FoundationEssentials

/// An instance's flow state as one value: `receive` takes an event and returns what to do; `Engine` performs
/// the actions (HTTP, store, delegate callbacks, timers) and feeds back what they produced. The states and
/// every state × event cell are in `README.md` next to this file.
///
/// Two regions: the configuration (setRequestor and the calls waiting for it) and the flow (a login, a logout
/// waiting for its page). `closed` is sticky. Generic over the requestor, the held calls and the flows'
/// waiters, so that the cells are tested with plain values.
struct EngineMachine<Requestor, Held, Waiter> {
    enum Configuration {
        /// No setRequestor yet.
        case unset
        /// `inFlight` setRequestor calls not ended; `previous` (the requestor in force before them, kept for the
        /// flow in progress) is nil when configuring, non-nil when reconfiguring.
        case configuring(inFlight: Int, previous: Requestor?)
        case ready(Requestor)
        /// The last setRequestor failed, for these reasons (its warnings and errors).
        case failed(reasons: [AdvancedStatus])
    }

    /// Where a login waits.
    enum LoginStep: Equatable {
        /// Asking the host (partner SSO): access, the platform's picker, the account exchange.
        case partnerPicker
        /// displayProviderDialog sent (or a provider picked and its session being created).
        case dialog
        /// navigateToUrl sent; waiting for handleExternalURL.
        case page(code: String, mvpd: String)
        /// handleExternalURL arrived; reading the profile.
        case completing
        /// REGCODE sent; polling `profiles/code/{code}`.
        case secondScreen(code: String, mvpd: String)
    }

    struct Login {
        let id: Int
        /// The requestor the login started under; a repeated setRequestor does not change it.
        let requestor: Requestor
        var step: LoginStep
        /// Everyone the login's outcome answers: getAuthentication, getAuthorization, a repeated handleExternalURL.
        var waiters: [Waiter]
        /// The warnings and errors raised in the login since it last went to the user (the provider dialog, the
        /// login page): reasons of its outcome, whichever call or timer raised them.
        var reasons: [AdvancedStatus] = []
    }

    struct Logout {
        let id: Int
        /// A partner profile was logged out: VSA203 follows the final callback.
        let partner: Bool
        var waiters: [Waiter]
    }

    enum Event {
        case setRequestorStarted
        /// The requestor configured, nil when setRequestor failed (for `reasons`).
        case setRequestorEnded(Requestor?, reasons: [AdvancedStatus])
        /// A call of `WaitingCall` asks to run.
        case waitingCall(Held)
        /// getAuthentication or getAuthorization needs a login under `requestor`.
        case loginRequested(Requestor, Waiter, partner: Bool, hasProviders: Bool)
        /// The partner step of login `flow` fell back to (or chose for the user in) the provider dialog.
        case providerDialogShown(flow: Int)
        /// setSelectedProvider named a provider of the requestor (a TempPass one logs in without a session).
        case providerPicked(tempPass: Bool)
        /// Login `flow`'s session was created: `.page` or `.secondScreen`.
        case sessionOpened(flow: Int, LoginStep)
        /// A status was sent for login `flow` (by its setSelectedProvider, a poll, the partner step).
        case raised(flow: Int, AdvancedStatus)
        /// handleExternalURL or getAuthenticationToken.
        case redirected
        /// A handleExternalURL waits for the login being completed.
        case joined(Waiter)
        /// The login (if any) ended with this outcome; the engine has made its callbacks.
        case loginEnded(AuthenticationStatus)
        /// logout deleted the profiles and opens the logout page.
        case logoutStarted(Waiter, partner: Bool)
        /// The logout page came back, its timer fired (`flow`), or it was replaced or cancelled (nil).
        case logoutEnded(flow: Int?)
        /// The host went away.
        case cancel
    }

    enum Action {
        /// Let a held call go on.
        case run(Held)
        case resume(Waiter, AuthenticationStatus)
        /// End this login request at once: cancelled (closed) or no providers.
        case refuseLogin(Waiter, Requestor, cancelled: Bool)
        case displayProviderDialog
        case startPartnerLogin(flow: Int)
        case createSession(flow: Int)
        case startPolling(flow: Int, code: String, mvpd: String)
        case stopPolling
        case completeLogin(flow: Int, code: String, mvpd: String, Requestor)
        /// handleExternalURL waits for the login's end (send `joined`).
        case join
        /// handleExternalURL before any login page: the stored state, no callback.
        case answerStoredState(Requestor)
        /// handleExternalURL after a flow ended: its outcome again, no callback.
        case answer(AuthenticationStatus)
        /// handleExternalURL with no flow ever: the stored state with setAuthenticationStatus.
        case reportStoredState(Requestor?)
        /// End the login waiting on the host with the cancel outcome (the engine sends `loginEnded`).
        case cancelLogin(Requestor)
        /// End the logout waiting for its page (the engine sends `logoutEnded`).
        case endLogout
        case startLogoutTimer(flow: Int)
        case stopLogoutTimer
        /// setAuthenticationStatus(0, "User Not Authenticated Error"), then VSA203 when `partner`.
        case reportLogout(partner: Bool)
    }

    private(set) var configuration = Configuration.unset
    private(set) var login: Login?
    private(set) var logout: Logout?
    /// The host went away (sticky): nothing that waits on the host starts.
    private(set) var closed = false
    /// Calls waiting for setRequestor, in arrival order.
    private(set) var held: [Held] = []
    /// The outcome of the last flow that ended; answers a repeated handleExternalURL.
    private(set) var lastCompleted: AuthenticationStatus?
    private var flows = 0

    /// The requestor in force: the ready one, or while reconfiguring the previous one.
    var inForce: Requestor? {
        switch configuration {
        case .ready(let requestor): requestor
        case .configuring(_, let previous): previous
        case .unset, .failed: nil
        }
    }

    /// The reasons a failed outcome carries (Protocol/README.md "Failure reasons"): the warnings and errors of
    /// `own` (for the login's own outcome, `ofLogin`, after those raised in the login in progress), else, when
    /// there are none, those of the failed setRequestor.
    func reasons(_ own: [AdvancedStatus], ofLogin: Bool) -> [AdvancedStatus] {
        let raised = ((ofLogin ? login?.reasons ?? [] : []) + own).filter(\.isReason)
        if raised.isEmpty, case .failed(let reasons) = configuration { return reasons }
        return raised
    }

    /// The requestor a call that was let go runs under; nil when setRequestor failed, never ended, or after close.
    var readyRequestor: Requestor? {
        if !closed, case .ready(let requestor) = configuration { return requestor }
        return nil
    }

    /// Whether a `WaitingCall` would be held now.
    var holdsCalls: Bool {
        if !closed, case .configuring = configuration { return true }
        return false
    }

    /// Whether login `flow` is the current one and polls its second screen.
    func isPolling(_ flow: Int) -> Bool {
        guard let login, login.id == flow, case .secondScreen = login.step else { return false }
        return true
    }

    /// Whether login `flow` is the current one and still in its partner step.
    func isPartnerStep(_ flow: Int) -> Bool {
        login?.id == flow && login?.step == .partnerPicker
    }

    mutating func receive(_ event: Event) -> [Action] {
        switch event {
        case .setRequestorStarted:
            if case .configuring(let n, let previous) = configuration {
                configuration = .configuring(inFlight: n + 1, previous: previous)
            } else {
                configuration = .configuring(inFlight: 1, previous: inForce)
            }
            return []
        case .setRequestorEnded(let requestor, let reasons):
            guard case .configuring(let n, let previous) = configuration else {
                preconditionFailure("setRequestor ended while \(configuration)")
            }
            guard n == 1 else {
                configuration = .configuring(inFlight: n - 1, previous: requestor ?? previous)
                return []
            }
            configuration = requestor.map { .ready($0) } ?? .failed(reasons: reasons.filter(\.isReason))
            defer { held = [] }
            return held.map { .run($0) }
        case .waitingCall(let call):
            guard holdsCalls else { return [.run(call)] }
            held.append(call)
            return []
        case .loginRequested(let requestor, let waiter, let partner, let hasProviders):
            if login != nil {
                login?.waiters.append(waiter)
                return []
            }
            if closed || !hasProviders { return [.refuseLogin(waiter, requestor, cancelled: closed)] }
            flows += 1
            lastCompleted = nil
            login = Login(id: flows, requestor: requestor, step: partner ? .partnerPicker : .dialog, waiters: [waiter])
            return [partner ? .startPartnerLogin(flow: flows) : .displayProviderDialog]
        case .providerDialogShown(let flow):
            if login?.id == flow {
                login?.step = .dialog
                login?.reasons = []
            }
            return []
        case .providerPicked(let tempPass):
            guard let current = login, !tempPass else { return [.stopPolling] }
            login?.step = .dialog
            return [.stopPolling, .createSession(flow: current.id)]
        case .sessionOpened(let flow, let step):
            guard login?.id == flow else { return [] }
            login?.step = step
            if case .page = step { login?.reasons = [] }
            if case .secondScreen(let code, let mvpd) = step { return [.startPolling(flow: flow, code: code, mvpd: mvpd)] }
            return []
        case .raised(let flow, let status):
            if login?.id == flow, status.isReason { login?.reasons.append(status) }
            return []
        case .redirected:
            if logout != nil { return [.endLogout] }
            if let current = login {
                switch current.step {
                case .page(let code, let mvpd):
                    login?.step = .completing
                    return [.completeLogin(flow: current.id, code: code, mvpd: mvpd, current.requestor)]
                case .completing:
                    return [.join]
                case .partnerPicker, .dialog, .secondScreen:
                    return [.answerStoredState(current.requestor)]
                }
            }
            if let lastCompleted { return [.answer(lastCompleted)] }
            return [.reportStoredState(inForce)]
        case .joined(let waiter):
            guard login != nil else { return [.resume(waiter, lastCompleted ?? .failed(SDKErrorCode.providerNotSelected))] }
            login?.waiters.append(waiter)
            return []
        case .loginEnded(let outcome):
            lastCompleted = outcome
            guard let ended = login else { return [] }
            login = nil
            return [.stopPolling] + ended.waiters.map { .resume($0, outcome) }
        case .logoutStarted(let waiter, let partner):
            precondition(logout == nil, "logout started while another waits for its page")
            flows += 1
            lastCompleted = nil
            logout = Logout(id: flows, partner: partner, waiters: [waiter])
            return [.startLogoutTimer(flow: flows)]
        case .logoutEnded(let flow):
            guard let ended = logout, flow == nil || flow == ended.id else { return [] }
            let outcome = AuthenticationStatus.failed(SDKErrorCode.userNotAuthenticated)
            logout = nil
            lastCompleted = outcome
            return [.stopLogoutTimer, .reportLogout(partner: ended.partner)] + ended.waiters.map { .resume($0, outcome) }
        case .cancel:
            closed = true
            var actions: [Action] = held.map { .run($0) }
            held = []
            if let current = login, current.step != .completing { actions.append(.cancelLogin(current.requestor)) }
            if logout != nil { actions.append(.endLogout) }
            return actions
        }
    }
}

extension EngineMachine.Configuration: Equatable where Requestor: Equatable {}
extension EngineMachine.Action: Equatable where Requestor: Equatable, Held: Equatable, Waiter: Equatable {}
