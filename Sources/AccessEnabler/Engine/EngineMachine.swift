import ThreadAffinity

/// An instance's flow and lifecycle state as one value: one mutating method per event, each returning what the
/// engine must do for that event as a value of its own type; `Engine` performs it (HTTP, store, delegate
/// callbacks, timers) and sends back, as further events, what that produced. The states and every state × event
/// cell are in `README.md` next to this file.
///
/// Two regions that move independently — the lifecycle (open or closed, the configuration setRequestor made, and
/// the calls that wait for it and for their turn) and the flow (a login, with its second screen's poll, or a logout
/// waiting for its page, with its timer) — and what they decide beside them: the live-login view (what the host was
/// told, what the instance knows, the login's expiry timer), the TempPass identity of the login, the partner
/// account. Each region is one enum, so that impossible combinations cannot be written: a requestor beside a
/// failure, a kept outcome beside a login in progress, a poll without a second screen, two logins or two logout
/// pages. They are not one enum because they are independent: a login goes on across a repeated setRequestor, and
/// every pairing is a state of the table. Timers are kept as their handles (`Scheduled`), returned by the event
/// that leaves their state so that the engine cancels them: no generation counters.
/// Generic over the requestor, the calls and the flows' waiters, so that the cells are tested with plain values.
struct EngineMachine<Requestor, Call, Waiter> {
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
        case secondScreen(SecondScreen)
    }

    /// A second screen being polled: its code and where it came from, how the polls went, and the next poll's
    /// timer (kept here, so that whatever moves the login on stops it: `PollStop`).
    struct SecondScreen: Equatable {
        let code: String
        let mvpd: String
        /// The code's expiry, epoch milliseconds.
        let notAfter: Int64
        /// Whether the last poll reached the backend (a failure after a success sends REG503).
        var reachable = true
        /// When the REGCODE or the last REG100 was sent, epoch milliseconds by the engine's clock.
        var lastCountdown: Int64
        /// The next poll, armed by the engine (`pollArmed`); nil while a poll runs.
        var timer: Scheduled?

        init(code: String, mvpd: String, notAfter: Int64, sentAt: Int64) {
            self.code = code
            self.mvpd = mvpd
            self.notAfter = notAfter
            lastCountdown = sentAt
        }

        static func == (a: SecondScreen, b: SecondScreen) -> Bool { a.code == b.code && a.mvpd == b.mvpd }
    }

    /// The poll timer to cancel because the second screen it polls was left (nil: none was armed).
    typealias PollStop = Scheduled?

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
        /// The page's timeout, armed by the engine (`logoutTimerArmed`).
        var timer: Scheduled?
    }

    /// The outcome of the last flow that ended, and which flow it was.
    struct Ended {
        let flow: Int
        let outcome: AuthenticationStatus
    }

    enum Flow {
        /// No login; `last` answers a repeated handleExternalURL.
        case idle(last: Ended?)
        /// A login, and the logout page that was open when it started, if any.
        case login(Login, logout: Logout?)
        /// A logout waiting for its page; `last` as in `idle`.
        case logout(Logout, last: Ended?)
    }

    /// The `WaitingCall`s that entered and have not yet run, in the order they entered, and whether one of them
    /// has its turn (runs until it answers or waits on the host).
    struct Calls {
        var queued: [Call] = []
        var running = false
        /// Calls that take no turn (setSelectedProvider, handleExternalURL, getAuthenticationToken) between their
        /// start and their return.
        var unqueued = 0

        /// No call of the instance is between its request and its response, but those waiting on the host.
        var none: Bool { queued.isEmpty && !running && unqueued == 0 }
    }

    /// The instance open, or closed: the host went away (sticky; nothing that waits on the host starts), with the
    /// configuration it had, which the setRequestor calls still in flight go on changing.
    enum Lifecycle {
        case open(Configuration)
        case closed(Configuration)
    }

    private(set) var lifecycle = Lifecycle.open(.unset)
    private(set) var flow = Flow.idle(last: nil)
    private(set) var calls = Calls()

    var configuration: Configuration {
        switch lifecycle {
        case .open(let configuration), .closed(let configuration): configuration
        }
    }

    var closed: Bool {
        if case .closed = lifecycle { return true }
        return false
    }

    private mutating func configure(_ configuration: Configuration) {
        lifecycle = closed ? .closed(configuration) : .open(configuration)
    }
    /// The id of the last flow started (logins and logouts share the numbering).
    private var flows = 0
    /// The number of the last setRequestor started (`setRequestorStarted`), and what it ended with once it has
    /// while older ones are still in flight: the last one sent decides, whichever ends last.
    private(set) var latestSetRequestor = 0
    private var latestEnded: (requestor: Requestor?, reasons: [AdvancedStatus])?
    /// The setRequestor calls `admit` started whose own job has not yet taken its number, in order.
    private var admittedSetRequestors: [Int] = []
    /// The last login that ended and its outcome, for the calls that worked for it (`staleOutcome`).
    private var lastLogin: Ended?
    /// What the host was told of the login and what the instance knows of it (Protocol/README.md, "Live logins").
    private(set) var live = LiveLogin()
    /// `AP-TempPass-Identity` of the login last started (from its call's `data`; empty when it had none), sent on
    /// that login's session and profile calls and on decisions that bring none of their own.
    private(set) var tempPassIdentity: [(String, String)] = []
    /// The platform account as the host last described it (partner SSO).
    var partnerAccount: PartnerAccount?
    /// The login whose platform picker is up: presentTvProviderDialog was sent for it and dismissTvProviderDialog
    /// not yet (`Engine.dismissPlatformPicker`).
    var platformPickerFlow: Int?
    /// The instance's storage check (`StorageCheck`) has run: it runs once, at the first setRequestor that configures
    /// (again at the next one when the store failed it).
    private var storageChecked = false

    /// Whether the storage check runs now (until it has run; never after close).
    var storageCheckDue: Bool { !storageChecked && !closed }

    mutating func storageCheckRan() { storageChecked = true }

    /// The live-login view: what the instance told its host of the login and what it knows of it.
    struct LiveLogin {
        /// The status of the last setAuthenticationStatus sent (nil: none yet, nothing to keep true).
        var announced: Int32?
        /// The status as this instance itself last knew it: what it told its host, or what its own setRequestor
        /// found (`settled`). A change is told only when it moves the login away from this: the instance's own
        /// writes are not news to it.
        var known: Int32?
        /// A change arrived while the instance was not quiet: it is checked once the instance is.
        var checkPending = false
        /// A check could not read the login (the store failed): it is made again after a while (`checkLogin`).
        var recheck: Scheduled?
        /// The current login's end (`notAfter`, epoch ms) and the timer that checks the login then.
        var expiry: (notAfter: Int64, timer: Scheduled)?
    }

    // MARK: reading the state

    var login: Login? {
        if case .login(let login, _) = flow { return login }
        return nil
    }

    var logout: Logout? {
        switch flow {
        case .login(_, let logout): logout
        case .logout(let logout, _): logout
        case .idle: nil
        }
    }

    /// The outcome of the last flow that ended, while no login is in progress.
    var lastEnded: Ended? {
        switch flow {
        case .idle(let last), .logout(_, let last): last
        case .login: nil
        }
    }

    /// The requestor in force: the ready one, or while reconfiguring the previous one.
    var inForce: Requestor? {
        switch configuration {
        case .ready(let requestor): requestor
        case .configuring(_, let previous): previous
        case .unset, .failed: nil
        }
    }

    /// The requestor a call that has its turn runs under; nil when setRequestor failed, never ended, or after close.
    var readyRequestor: Requestor? {
        if !closed, case .ready(let requestor) = configuration { return requestor }
        return nil
    }

    /// The second screen login `flow` polls, while it is the current one and polls.
    func secondScreen(_ flow: Int) -> SecondScreen? {
        guard let login, login.id == flow, case .secondScreen(let screen) = login.step else { return nil }
        return screen
    }

    /// Whether login `flow` is the current one and polls its second screen.
    func isPolling(_ flow: Int) -> Bool { secondScreen(flow) != nil }

    /// Whether login `flow` is the current one and still in its partner step.
    func isPartnerStep(_ flow: Int) -> Bool {
        login?.id == flow && login?.step == .partnerPicker
    }

    /// What a call working for login `flow` answers once it finds, after a suspension, that the login is no
    /// longer the current one: the outcome the login ended with, or "Provider not Selected Error" when it was
    /// replaced before anyone kept its outcome. nil while `flow` is current (or there was no login to work for).
    func staleOutcome(of flow: Int?) -> AuthenticationStatus? {
        guard let flow, login?.id != flow else { return nil }
        if let last = lastLogin, last.flow == flow { return last.outcome }
        return .failed(SDKErrorCode.providerNotSelected)
    }

    /// The reasons a failed outcome carries (Protocol/README.md "Failure reasons"): the warnings and errors of
    /// `own` (for the login's own outcome, `ofLogin`, after those raised in the login in progress), else, when
    /// there are none, those of the failed setRequestor.
    func reasons(_ own: [AdvancedStatus], ofLogin: Bool) -> [AdvancedStatus] {
        let raised = ((ofLogin ? login?.reasons ?? [] : []) + own).filter(\.isReason)
        if raised.isEmpty, case .failed(let reasons) = configuration { return reasons }
        return raised
    }

    // MARK: the live login (Protocol/README.md, "Live logins")

    /// Whether nothing of the instance runs: a requestor ready, no setRequestor in flight, no login or logout in
    /// progress, no call between its request and its response. A login change is checked only then, so that an
    /// unsolicited setAuthenticationStatus never comes between a call and its response.
    var quiet: Bool { readyRequestor != nil && login == nil && logout == nil && calls.none }

    /// setAuthenticationStatus(`status`) was sent: the host and the instance know it.
    mutating func told(_ status: Int32) {
        live.announced = status
        live.known = status
    }

    /// setRequestor found `status` (its re-sync, its partner exchange): the instance knows it; the host learns it
    /// from its next checkAuthentication.
    mutating func settled(_ status: Int32) { live.known = status }

    /// The watched logins changed (or a check waited for the end of a flow or a call): whether to check now; when
    /// the instance is not quiet the check waits (`checkPending`).
    mutating func loginsChanged() -> Bool {
        live.checkPending = !quiet
        return quiet
    }

    /// A check could not read the login: `arm` makes the timer that checks again, unless one is armed already.
    mutating func recheckLogin(_ arm: () -> Scheduled) {
        if live.recheck == nil { live.recheck = arm() }
    }

    /// The timer of `recheckLogin` fired.
    mutating func rechecking() { live.recheck = nil }

    /// What a check of the login found.
    enum LoginCheck: Equatable {
        /// The instance is no longer quiet: the check waits for its end.
        case wait
        /// Nothing to tell: the login is what the instance knew, or what its host was told.
        case nothingNew
        /// Someone else moved the login away from what the instance knew and its host was told: one unsolicited
        /// setAuthenticationStatus.
        case announce(Int32)
    }

    /// The login read again is logged in (`status` 1) or not (0).
    mutating func loginChecked(_ status: Int32) -> LoginCheck {
        guard quiet else {
            live.checkPending = true
            return .wait
        }
        let known = live.known
        live.known = status
        guard status != known, let announced = live.announced, status != announced else { return .nothingNew }
        return .announce(status)
    }

    /// A getAuthentication that joins no login gave `identity` (its `data`'s): the identity of the login it reports.
    mutating func identityGiven(_ identity: [(String, String)]) { tempPassIdentity = identity }

    /// Whether the expiry timer must be armed again for a login ending at `notAfter` (nil: no login).
    func expiryOutdated(_ notAfter: Int64?) -> Bool { notAfter != live.expiry?.notAfter }

    /// The engine armed `timer` for the login's end `notAfter` (nil: none, no login); returns the timer it replaces.
    mutating func expiryArmed(_ notAfter: Int64?, _ timer: Scheduled?) -> Scheduled? {
        defer { live.expiry = notAfter.flatMap { end in timer.map { (end, $0) } } }
        return live.expiry?.timer
    }

    /// The expiry timer fired.
    mutating func expired() { live.expiry = nil }

    // MARK: the configuration and the calls that wait

    /// A setRequestor is in flight, and the instance is open.
    var configuringNow: Bool {
        if !closed, case .configuring = configuration { return true }
        return false
    }

    /// The next queued call, when it may run now: none has the turn, and no setRequestor holds them.
    private mutating func nextCall() -> Call? {
        guard !calls.running, !configuringNow, !calls.queued.isEmpty else { return nil }
        calls.running = true
        return calls.queued.removeFirst()
    }

    /// A call a host just received, before it starts (`AccessEnabler.admit`): a setRequestor starts its
    /// configuration here, and its own `setRequestorStarted` takes the number then.
    mutating func admit(_ call: CallAdmission) -> Admission {
        if closed { return .closed }
        switch call {
        case .setRequestor:
            admittedSetRequestors.append(startSetRequestor())
        case .needsRequestor:
            if case .unset = configuration { return .requestorNotSet }
        case .other:
            break
        }
        return .admitted
    }

    /// A setRequestor starts (or was started by `admit`); returns its number, for `setRequestorEnded`.
    mutating func setRequestorStarted() -> Int {
        admittedSetRequestors.isEmpty ? startSetRequestor() : admittedSetRequestors.removeFirst()
    }

    private mutating func startSetRequestor() -> Int {
        latestSetRequestor += 1
        latestEnded = nil
        if case .configuring(let n, let previous) = configuration {
            configure(.configuring(inFlight: n + 1, previous: previous))
        } else {
            configure(.configuring(inFlight: 1, previous: inForce))
        }
        return latestSetRequestor
    }

    /// setRequestor number `number` ended with `requestor` (nil: it failed, for `reasons`). When the last one in
    /// flight has ended, the one sent last decides the configuration, whichever ended last, and the call that now
    /// has its turn is returned.
    mutating func setRequestorEnded(_ number: Int, _ requestor: Requestor?, reasons: [AdvancedStatus]) -> Call? {
        guard case .configuring(let n, let previous) = configuration else {
            preconditionFailure("setRequestor ended while \(configuration)")
        }
        if number == latestSetRequestor { latestEnded = (requestor, reasons) }
        guard n == 1 else {
            configure(.configuring(inFlight: n - 1, previous: requestor ?? previous))
            return nil
        }
        let decided = latestEnded ?? (requestor, reasons)
        latestEnded = nil
        configure(decided.requestor.map { .ready($0) } ?? .failed(reasons: decided.reasons.filter(\.isReason)))
        return nextCall()
    }

    /// A `WaitingCall` entered: it is queued behind the calls that entered before it; returns it when it has its
    /// turn now (else it is returned by the `turnEnded` or `setRequestorEnded` that gives it its turn).
    mutating func callEntered(_ call: Call) -> Call? {
        calls.queued.append(call)
        return nextCall()
    }

    /// A call that takes no turn started (`+1`) or returned (`-1`).
    mutating func unqueuedCall(_ change: Int) {
        calls.unqueued += change
    }

    /// The call that had its turn answered or now waits on the host; returns the call whose turn it is now.
    mutating func turnEnded() -> Call? {
        precondition(calls.running, "a turn ended that no call had")
        calls.running = false
        return nextCall()
    }

    // MARK: the login

    enum LoginRequest {
        /// The login in progress took the waiter.
        case joined
        /// End this request at once: closed (`cancelled`: "Provider not Selected Error"), or the requestor has no
        /// MVPD (not cancelled: "Provider not Available Error").
        case refused(Waiter, cancelled: Bool)
        /// A new login `flow`: show the provider dialog.
        case showProviderDialog(flow: Int)
        /// A new login `flow` that starts with the partner step.
        case startPartnerLogin(flow: Int)
    }

    /// getAuthentication or getAuthorization needs a login under `requestor`; `identity`: its TempPass identity,
    /// that of a new login (a call that joins the login in progress leaves the login's).
    mutating func loginRequested(
        _ requestor: Requestor, _ waiter: Waiter, partner: Bool, hasProviders: Bool, identity: [(String, String)] = []
    ) -> LoginRequest {
        let logout: Logout?
        switch flow {
        case .login(var login, let open):
            login.waiters.append(waiter)
            flow = .login(login, logout: open)
            return .joined
        case .idle:
            logout = nil
        case .logout(let open, _):
            logout = open
        }
        if closed || !hasProviders { return .refused(waiter, cancelled: closed) }
        tempPassIdentity = identity
        flows += 1
        let login = Login(id: flows, requestor: requestor, step: partner ? .partnerPicker : .dialog, waiters: [waiter])
        flow = .login(login, logout: logout)
        return partner ? .startPartnerLogin(flow: flows) : .showProviderDialog(flow: flows)
    }

    /// Changes the login in progress when it is `id` (any login when nil); returns the poll timer of a second
    /// screen the change left.
    @discardableResult
    private mutating func updateLogin(_ id: Int? = nil, _ change: (inout Login) -> Void) -> PollStop {
        guard case .login(var login, let logout) = flow, id == nil || login.id == id else { return nil }
        let before = login.step
        change(&login)
        flow = .login(login, logout: logout)
        guard case .secondScreen(let left) = before, before != login.step else { return nil }
        return left.timer
    }

    /// Changes login `flow`'s second screen while the login is current and polls; nil when it does not.
    private mutating func updateScreen<T>(_ id: Int, _ change: (inout SecondScreen) -> T) -> T? {
        guard var screen = secondScreen(id) else { return nil }
        let result = change(&screen)
        updateLogin(id) { $0.step = .secondScreen(screen) }
        return result
    }

    /// The engine armed the next poll of login `flow`'s second screen; false when that login no longer polls
    /// (the engine cancels the timer).
    mutating func pollArmed(flow id: Int, _ timer: Scheduled) -> Bool { updateScreen(id) { $0.timer = timer } != nil }

    /// The poll timer of login `flow` fired: the second screen to poll now, if the login still polls.
    mutating func pollDue(flow id: Int) -> SecondScreen? {
        updateScreen(id) { screen in
            screen.timer = nil
            return screen
        }
    }

    /// A poll of login `flow` reached the backend or not; returns whether the one before it had (a failure just
    /// after a success is the one to report).
    @discardableResult
    mutating func polled(flow id: Int, reachable: Bool) -> Bool {
        updateScreen(id) { screen in
            defer { screen.reachable = reachable }
            return screen.reachable
        } ?? false
    }

    /// The second screen of login `flow` when a countdown (REG100) is due at `now`, `interval` ms after the last one
    /// and before the code's end (it then counts as sent).
    mutating func countdownDue(flow id: Int, now: Int64, interval: Int64) -> SecondScreen? {
        updateScreen(id) { screen -> SecondScreen? in
            guard now - screen.lastCountdown >= interval, now < screen.notAfter else { return nil }
            screen.lastCountdown = now
            return screen
        } ?? nil
    }

    /// The partner step of login `flow` fell back to (or chose for the user in) the provider dialog.
    mutating func providerDialogShown(flow id: Int) {
        updateLogin(id) { login in
            login.step = .dialog
            login.reasons = []
        }
    }

    /// What to do for a provider the user picked.
    struct ProviderPick {
        /// The poll of the second screen the login leaves for the new session.
        let stopPolling: PollStop
        /// The login whose session to create; nil when no login is in progress or the provider is TempPass.
        let createSession: Int?
    }

    /// setSelectedProvider named a provider of the requestor (a TempPass one logs in without a session).
    mutating func providerPicked(tempPass: Bool) -> ProviderPick {
        guard let current = login, !tempPass else { return ProviderPick(stopPolling: nil, createSession: nil) }
        return ProviderPick(stopPolling: updateLogin { $0.step = .dialog }, createSession: current.id)
    }

    /// What opening a session means: poll a new second screen, stop the poll of one the login left.
    struct SessionOpen {
        let startPolling: Bool
        let stopPolling: PollStop
    }

    /// Login `flow`'s session was created: `.page` or `.secondScreen`.
    mutating func sessionOpened(flow id: Int, _ step: LoginStep) -> SessionOpen {
        guard login?.id == id else { return SessionOpen(startPolling: false, stopPolling: nil) }
        let left = updateLogin { login in
            login.step = step
            if case .page = step { login.reasons = [] }
        }
        if case .secondScreen = step { return SessionOpen(startPolling: true, stopPolling: left) }
        return SessionOpen(startPolling: false, stopPolling: left)
    }

    /// A status was sent for login `flow` (by its setSelectedProvider, a poll, the partner step).
    mutating func raised(flow id: Int, _ status: AdvancedStatus) {
        guard status.isReason else { return }
        updateLogin(id) { $0.reasons.append(status) }
    }

    enum Redirect {
        /// End the logout waiting for its page.
        case endLogout
        case completeLogin(flow: Int, code: String, mvpd: String, Requestor)
        /// Wait for the end of the login being completed (`joined`).
        case join
        /// Before any login page: the stored state, no callback.
        case answerStoredState(Requestor)
        /// After a flow ended: its outcome again, no callback.
        case answer(AuthenticationStatus)
        /// No flow ever: the stored state with setAuthenticationStatus.
        case reportStoredState(Requestor?)
    }

    /// handleExternalURL or getAuthenticationToken.
    mutating func redirected() -> Redirect {
        if logout != nil { return .endLogout }
        if let current = login {
            switch current.step {
            case .page(let code, let mvpd):
                updateLogin { $0.step = .completing }
                return .completeLogin(flow: current.id, code: code, mvpd: mvpd, current.requestor)
            case .completing:
                return .join
            case .partnerPicker, .dialog, .secondScreen:
                return .answerStoredState(current.requestor)
            }
        }
        if let last = lastEnded { return .answer(last.outcome) }
        return .reportStoredState(inForce)
    }

    /// A handleExternalURL waits for the login being completed: nil when the login took it, else the outcome to
    /// answer it with at once (the login ended meanwhile).
    mutating func joined(_ waiter: Waiter) -> AuthenticationStatus? {
        guard login != nil else { return lastEnded?.outcome ?? .failed(SDKErrorCode.providerNotSelected) }
        updateLogin { $0.waiters.append(waiter) }
        return nil
    }

    /// What ending the login means: stop its poll, and answer its waiters.
    struct LoginEnd {
        /// A login ended (not an outcome reported with no login in progress).
        let ended: Bool
        let stopPolling: PollStop
        let resume: [Waiter]
    }

    /// The login (if any) ended with `outcome` (its reasons already in it); the engine has made its callbacks.
    mutating func loginEnded(_ outcome: AuthenticationStatus) -> LoginEnd {
        switch flow {
        case .login(let ended, let logout):
            let last = Ended(flow: ended.id, outcome: outcome)
            lastLogin = last
            flow = logout.map { .logout($0, last: last) } ?? .idle(last: last)
            var poll: PollStop = nil
            if case .secondScreen(let screen) = ended.step { poll = screen.timer }
            return LoginEnd(ended: true, stopPolling: poll, resume: ended.waiters)
        case .idle:
            flow = .idle(last: Ended(flow: 0, outcome: outcome))
        case .logout(let open, _):
            flow = .logout(open, last: Ended(flow: 0, outcome: outcome))
        }
        return LoginEnd(ended: false, stopPolling: nil, resume: [])
    }

    // MARK: the logout page

    /// The engine armed logout `flow`'s page timeout; false when that logout no longer waits (the engine cancels
    /// the timer).
    mutating func logoutTimerArmed(flow id: Int, _ timer: Scheduled) -> Bool {
        guard var open = logout, open.id == id else { return false }
        open.timer = timer
        switch flow {
        case .login(let login, _): flow = .login(login, logout: open)
        case .logout(_, let last): flow = .logout(open, last: last)
        case .idle: return false
        }
        return true
    }

    /// logout deleted the profiles and opens the logout page; returns its flow id, for its timer.
    mutating func logoutStarted(_ waiter: Waiter, partner: Bool) -> Int {
        precondition(logout == nil, "logout started while another waits for its page")
        flows += 1
        let logout = Logout(id: flows, partner: partner, waiters: [waiter])
        if case .login(let login, _) = flow {
            flow = .login(login, logout: logout)
        } else {
            flow = .logout(logout, last: nil)
        }
        return flows
    }

    /// What ending the logout means: stop its timer, send the final callbacks, answer its waiters.
    struct LogoutEnd {
        let stopLogoutTimer: Scheduled?
        let partner: Bool
        let resume: [Waiter]
        let outcome: AuthenticationStatus
    }

    /// The logout page came back, its timer fired (`flow`), or it was replaced or cancelled (nil); nil when no
    /// logout (or not that one) waits.
    mutating func logoutEnded(flow id: Int?) -> LogoutEnd? {
        guard let ended = logout, id == nil || id == ended.id else { return nil }
        let outcome = AuthenticationStatus.failed(SDKErrorCode.userNotAuthenticated)
        if case .login(let login, _) = flow {
            flow = .login(login, logout: nil)
        } else {
            flow = .idle(last: Ended(flow: ended.id, outcome: outcome))
        }
        return LogoutEnd(stopLogoutTimer: ended.timer, partner: ended.partner, resume: ended.waiters, outcome: outcome)
    }

    // MARK: close

    /// What the host going away ends.
    struct Cancel {
        /// The queued call that now has its turn (held calls run, and fail fast).
        let run: Call?
        /// The login waiting on the host, to end with the cancel outcome (the engine sends `loginEnded`).
        let cancelLogin: Requestor?
        /// The logout waiting for its page, to end (the engine sends `logoutEnded`).
        let endLogout: Bool
    }

    /// The host went away.
    mutating func cancel() -> Cancel {
        lifecycle = .closed(configuration)
        return Cancel(run: nextCall(), cancelLogin: login.flatMap { cancellableLogin(flow: $0.id) }, endLogout: logout != nil)
    }

    /// The requestor of login `flow` while it is the current one and waits on the host (every step but
    /// `completing`, which the backend ends anyway), so that a cancel ends it (the engine sends `loginEnded`); nil
    /// otherwise. Used by `cancel` and by the cancel of one call working for the login (`$/cancelRequest`).
    func cancellableLogin(flow id: Int) -> Requestor? {
        guard let login, login.id == id, login.step != .completing else { return nil }
        return login.requestor
    }
}

extension EngineMachine.Configuration: Equatable where Requestor: Equatable {}
