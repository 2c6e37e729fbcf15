/// The state table of `Sources/AccessEnabler/README.md` ("The table") as data: one entry per cell, a named state
/// (`NamedState`, a row) × an event (`NamedEvent`, a column) → what the machine's method for that event returns (as action names) and the state
/// after. `EngineMachineTableTests` runs every cell against the machine and checks that the README's table says
/// the same, cell by cell; a cell changed in one place and not the other fails there.
enum EngineMachineTable {
    /// What one cell expects.
    enum Expectation: Equatable {
        /// The event cannot arrive in this state: a precondition of the machine, not run.
        case cannotHappen
        /// The actions' names (`Machine.Action.name`) in order, and the state after (`Machine.summary`) when it
        /// differs from the state before; nil when the state does not change.
        case actions([String], after: String?)
    }

    /// One cell: a row, a column and what the machine does there.
    struct Cell {
        let state: NamedState
        let event: NamedEvent
        let expected: Expectation

        /// The actions returned (none when empty) and the state after, when it changes.
        init(_ state: NamedState, _ event: NamedEvent, _ actions: String..., then after: String? = nil) {
            self.init(state, event, .actions(actions, after: after))
        }

        init(_ state: NamedState, _ event: NamedEvent, _ expected: Expectation) {
            self.state = state
            self.event = event
            self.expected = expected
        }

        static func cannotHappen(_ state: NamedState, _ event: NamedEvent) -> Cell {
            Cell(state, event, .cannotHappen)
        }

        /// The README's row and column, for failure messages.
        var position: String { "cell (\(state.rawValue), \(event.rawValue))" }
    }

    /// The rows, in the README's order: each named state as `Machine.summary` prints it once reached.
    static let states: [(state: NamedState, summary: String)] = [
        (.unset, "unset"),
        (.configuring, "configuring(1)"),
        (.reconfiguring, "reconfiguring(1, R)"),
        (.ready, "ready(R)"),
        (.failed, "failed"),
        (.callRunning, #"ready(R) running held ["next"]"#),
        (.partnerPicker, #"ready(R) login#1[R] partnerPicker ["get"]"#),
        (.dialog, #"ready(R) login#1[R] dialog ["get"]"#),
        (.page, #"ready(R) login#1[R] page(C,M) ["get"]"#),
        (.completing, #"ready(R) login#1[R] completing ["get"]"#),
        (.secondScreen, #"ready(R) login#1[R] secondScreen(C,M) ["get"]"#),
        (.logoutPending, #"ready(R) logout#1 ["logout"]"#),
        (.closed, "ready(R) closed"),
    ]

    /// Every cell, row by row, each row in the order of the README's columns.
    static let cells: [Cell] = [
        // unset
        Cell(.unset, .setRequestorStarted, then: "configuring(1)"),
        .cannotHappen(.unset, .setRequestorEnded),
        .cannotHappen(.unset, .setRequestorFailed),
        Cell(.unset, .callEntered, "run call", then: "unset running"),
        .cannotHappen(.unset, .turnEnded),
        Cell(.unset, .loginRequested, "displayProviderDialog", then: #"unset login#1[R] dialog ["w"]"#),
        Cell(.unset, .providerDialogShown),
        Cell(.unset, .providerPicked, "stopPolling"),
        Cell(.unset, .sessionOpened),
        Cell(.unset, .raised),
        Cell(.unset, .redirected, "reportStoredState nil"),
        Cell(.unset, .joined, "resume w 0 Provider not Selected Error"),
        Cell(.unset, .loginEnded, then: "unset last 1"),
        Cell(.unset, .logoutStarted, "startLogoutTimer #1", then: #"unset logout#1 ["w"]"#),
        Cell(.unset, .logoutEnded),
        Cell(.unset, .cancel, then: "unset closed"),
        // configuring
        Cell(.configuring, .setRequestorStarted, then: "configuring(2)"),
        Cell(.configuring, .setRequestorEnded, then: "ready(R2)"),
        Cell(.configuring, .setRequestorFailed, then: #"failed ["R400"]"#),
        Cell(.configuring, .callEntered, then: #"configuring(1) held ["call"]"#),
        .cannotHappen(.configuring, .turnEnded),
        Cell(.configuring, .loginRequested, "displayProviderDialog", then: #"configuring(1) login#1[R] dialog ["w"]"#),
        Cell(.configuring, .providerDialogShown),
        Cell(.configuring, .providerPicked, "stopPolling"),
        Cell(.configuring, .sessionOpened),
        Cell(.configuring, .raised),
        Cell(.configuring, .redirected, "reportStoredState nil"),
        Cell(.configuring, .joined, "resume w 0 Provider not Selected Error"),
        Cell(.configuring, .loginEnded, then: "configuring(1) last 1"),
        Cell(.configuring, .logoutStarted, "startLogoutTimer #1", then: #"configuring(1) logout#1 ["w"]"#),
        Cell(.configuring, .logoutEnded),
        Cell(.configuring, .cancel, then: "configuring(1) closed"),
        // reconfiguring
        Cell(.reconfiguring, .setRequestorStarted, then: "reconfiguring(2, R)"),
        Cell(.reconfiguring, .setRequestorEnded, then: "ready(R2)"),
        Cell(.reconfiguring, .setRequestorFailed, then: #"failed ["R400"]"#),
        Cell(.reconfiguring, .callEntered, then: #"reconfiguring(1, R) held ["call"]"#),
        .cannotHappen(.reconfiguring, .turnEnded),
        Cell(.reconfiguring, .loginRequested, "displayProviderDialog", then: #"reconfiguring(1, R) login#1[R] dialog ["w"]"#),
        Cell(.reconfiguring, .providerDialogShown),
        Cell(.reconfiguring, .providerPicked, "stopPolling"),
        Cell(.reconfiguring, .sessionOpened),
        Cell(.reconfiguring, .raised),
        Cell(.reconfiguring, .redirected, "reportStoredState R"),
        Cell(.reconfiguring, .joined, "resume w 0 Provider not Selected Error"),
        Cell(.reconfiguring, .loginEnded, then: "reconfiguring(1, R) last 1"),
        Cell(.reconfiguring, .logoutStarted, "startLogoutTimer #1", then: #"reconfiguring(1, R) logout#1 ["w"]"#),
        Cell(.reconfiguring, .logoutEnded),
        Cell(.reconfiguring, .cancel, then: "reconfiguring(1, R) closed"),
        // ready
        Cell(.ready, .setRequestorStarted, then: "reconfiguring(1, R)"),
        .cannotHappen(.ready, .setRequestorEnded),
        .cannotHappen(.ready, .setRequestorFailed),
        Cell(.ready, .callEntered, "run call", then: "ready(R) running"),
        .cannotHappen(.ready, .turnEnded),
        Cell(.ready, .loginRequested, "displayProviderDialog", then: #"ready(R) login#1[R] dialog ["w"]"#),
        Cell(.ready, .providerDialogShown),
        Cell(.ready, .providerPicked, "stopPolling"),
        Cell(.ready, .sessionOpened),
        Cell(.ready, .raised),
        Cell(.ready, .redirected, "reportStoredState R"),
        Cell(.ready, .joined, "resume w 0 Provider not Selected Error"),
        Cell(.ready, .loginEnded, then: "ready(R) last 1"),
        Cell(.ready, .logoutStarted, "startLogoutTimer #1", then: #"ready(R) logout#1 ["w"]"#),
        Cell(.ready, .logoutEnded),
        Cell(.ready, .cancel, then: "ready(R) closed"),
        // failed
        Cell(.failed, .setRequestorStarted, then: "configuring(1)"),
        .cannotHappen(.failed, .setRequestorEnded),
        .cannotHappen(.failed, .setRequestorFailed),
        Cell(.failed, .callEntered, "run call", then: "failed running"),
        .cannotHappen(.failed, .turnEnded),
        Cell(.failed, .loginRequested, "displayProviderDialog", then: #"failed login#1[R] dialog ["w"]"#),
        Cell(.failed, .providerDialogShown),
        Cell(.failed, .providerPicked, "stopPolling"),
        Cell(.failed, .sessionOpened),
        Cell(.failed, .raised),
        Cell(.failed, .redirected, "reportStoredState nil"),
        Cell(.failed, .joined, "resume w 0 Provider not Selected Error"),
        Cell(.failed, .loginEnded, then: "failed last 1"),
        Cell(.failed, .logoutStarted, "startLogoutTimer #1", then: #"failed logout#1 ["w"]"#),
        Cell(.failed, .logoutEnded),
        Cell(.failed, .cancel, then: "failed closed"),
        // call running
        Cell(.callRunning, .setRequestorStarted, then: #"reconfiguring(1, R) running held ["next"]"#),
        .cannotHappen(.callRunning, .setRequestorEnded),
        .cannotHappen(.callRunning, .setRequestorFailed),
        Cell(.callRunning, .callEntered, then: #"ready(R) running held ["next", "call"]"#),
        Cell(.callRunning, .turnEnded, "run next", then: "ready(R) running"),
        Cell(.callRunning, .loginRequested, "displayProviderDialog", then: #"ready(R) login#1[R] dialog ["w"] running held ["next"]"#),
        Cell(.callRunning, .providerDialogShown),
        Cell(.callRunning, .providerPicked, "stopPolling"),
        Cell(.callRunning, .sessionOpened),
        Cell(.callRunning, .raised),
        Cell(.callRunning, .redirected, "reportStoredState R"),
        Cell(.callRunning, .joined, "resume w 0 Provider not Selected Error"),
        Cell(.callRunning, .loginEnded, then: #"ready(R) running held ["next"] last 1"#),
        Cell(.callRunning, .logoutStarted, "startLogoutTimer #1", then: #"ready(R) logout#1 ["w"] running held ["next"]"#),
        Cell(.callRunning, .logoutEnded),
        Cell(.callRunning, .cancel, then: #"ready(R) closed running held ["next"]"#),
        // login at the partner picker
        Cell(.partnerPicker, .setRequestorStarted, then: #"reconfiguring(1, R) login#1[R] partnerPicker ["get"]"#),
        .cannotHappen(.partnerPicker, .setRequestorEnded),
        .cannotHappen(.partnerPicker, .setRequestorFailed),
        Cell(.partnerPicker, .callEntered, "run call", then: #"ready(R) login#1[R] partnerPicker ["get"] running"#),
        .cannotHappen(.partnerPicker, .turnEnded),
        Cell(.partnerPicker, .loginRequested, then: #"ready(R) login#1[R] partnerPicker ["get", "w"]"#),
        Cell(.partnerPicker, .providerDialogShown, then: #"ready(R) login#1[R] dialog ["get"]"#),
        Cell(.partnerPicker, .providerPicked, "stopPolling", "createSession #1", then: #"ready(R) login#1[R] dialog ["get"]"#),
        Cell(.partnerPicker, .sessionOpened, then: #"ready(R) login#1[R] page(C2,M2) ["get"]"#),
        Cell(.partnerPicker, .raised, then: #"ready(R) login#1[R] partnerPicker ["get"] reasons ["W"]"#),
        Cell(.partnerPicker, .redirected, "answerStoredState R"),
        Cell(.partnerPicker, .joined, then: #"ready(R) login#1[R] partnerPicker ["get", "w"]"#),
        Cell(.partnerPicker, .loginEnded, "stopPolling", "resume get 1", then: "ready(R) last 1"),
        Cell(.partnerPicker, .logoutStarted, "startLogoutTimer #2", then: #"ready(R) login#1[R] partnerPicker ["get"] logout#2 ["w"]"#),
        Cell(.partnerPicker, .logoutEnded),
        Cell(.partnerPicker, .cancel, "cancelLogin R", then: #"ready(R) login#1[R] partnerPicker ["get"] closed"#),
        // login at the provider dialog
        Cell(.dialog, .setRequestorStarted, then: #"reconfiguring(1, R) login#1[R] dialog ["get"]"#),
        .cannotHappen(.dialog, .setRequestorEnded),
        .cannotHappen(.dialog, .setRequestorFailed),
        Cell(.dialog, .callEntered, "run call", then: #"ready(R) login#1[R] dialog ["get"] running"#),
        .cannotHappen(.dialog, .turnEnded),
        Cell(.dialog, .loginRequested, then: #"ready(R) login#1[R] dialog ["get", "w"]"#),
        Cell(.dialog, .providerDialogShown),
        Cell(.dialog, .providerPicked, "stopPolling", "createSession #1"),
        Cell(.dialog, .sessionOpened, then: #"ready(R) login#1[R] page(C2,M2) ["get"]"#),
        Cell(.dialog, .raised, then: #"ready(R) login#1[R] dialog ["get"] reasons ["W"]"#),
        Cell(.dialog, .redirected, "answerStoredState R"),
        Cell(.dialog, .joined, then: #"ready(R) login#1[R] dialog ["get", "w"]"#),
        Cell(.dialog, .loginEnded, "stopPolling", "resume get 1", then: "ready(R) last 1"),
        Cell(.dialog, .logoutStarted, "startLogoutTimer #2", then: #"ready(R) login#1[R] dialog ["get"] logout#2 ["w"]"#),
        Cell(.dialog, .logoutEnded),
        Cell(.dialog, .cancel, "cancelLogin R", then: #"ready(R) login#1[R] dialog ["get"] closed"#),
        // login at the login page
        Cell(.page, .setRequestorStarted, then: #"reconfiguring(1, R) login#1[R] page(C,M) ["get"]"#),
        .cannotHappen(.page, .setRequestorEnded),
        .cannotHappen(.page, .setRequestorFailed),
        Cell(.page, .callEntered, "run call", then: #"ready(R) login#1[R] page(C,M) ["get"] running"#),
        .cannotHappen(.page, .turnEnded),
        Cell(.page, .loginRequested, then: #"ready(R) login#1[R] page(C,M) ["get", "w"]"#),
        Cell(.page, .providerDialogShown, then: #"ready(R) login#1[R] dialog ["get"]"#),
        Cell(.page, .providerPicked, "stopPolling", "createSession #1", then: #"ready(R) login#1[R] dialog ["get"]"#),
        Cell(.page, .sessionOpened, then: #"ready(R) login#1[R] page(C2,M2) ["get"]"#),
        Cell(.page, .raised, then: #"ready(R) login#1[R] page(C,M) ["get"] reasons ["W"]"#),
        Cell(.page, .redirected, "completeLogin #1 C M R", then: #"ready(R) login#1[R] completing ["get"]"#),
        Cell(.page, .joined, then: #"ready(R) login#1[R] page(C,M) ["get", "w"]"#),
        Cell(.page, .loginEnded, "stopPolling", "resume get 1", then: "ready(R) last 1"),
        Cell(.page, .logoutStarted, "startLogoutTimer #2", then: #"ready(R) login#1[R] page(C,M) ["get"] logout#2 ["w"]"#),
        Cell(.page, .logoutEnded),
        Cell(.page, .cancel, "cancelLogin R", then: #"ready(R) login#1[R] page(C,M) ["get"] closed"#),
        // login completing
        Cell(.completing, .setRequestorStarted, then: #"reconfiguring(1, R) login#1[R] completing ["get"]"#),
        .cannotHappen(.completing, .setRequestorEnded),
        .cannotHappen(.completing, .setRequestorFailed),
        Cell(.completing, .callEntered, "run call", then: #"ready(R) login#1[R] completing ["get"] running"#),
        .cannotHappen(.completing, .turnEnded),
        Cell(.completing, .loginRequested, then: #"ready(R) login#1[R] completing ["get", "w"]"#),
        Cell(.completing, .providerDialogShown, then: #"ready(R) login#1[R] dialog ["get"]"#),
        Cell(.completing, .providerPicked, "stopPolling", "createSession #1", then: #"ready(R) login#1[R] dialog ["get"]"#),
        Cell(.completing, .sessionOpened, then: #"ready(R) login#1[R] page(C2,M2) ["get"]"#),
        Cell(.completing, .raised, then: #"ready(R) login#1[R] completing ["get"] reasons ["W"]"#),
        Cell(.completing, .redirected, "join"),
        Cell(.completing, .joined, then: #"ready(R) login#1[R] completing ["get", "w"]"#),
        Cell(.completing, .loginEnded, "stopPolling", "resume get 1", then: "ready(R) last 1"),
        Cell(.completing, .logoutStarted, "startLogoutTimer #2", then: #"ready(R) login#1[R] completing ["get"] logout#2 ["w"]"#),
        Cell(.completing, .logoutEnded),
        Cell(.completing, .cancel, then: #"ready(R) login#1[R] completing ["get"] closed"#),
        // login at the second screen
        Cell(.secondScreen, .setRequestorStarted, then: #"reconfiguring(1, R) login#1[R] secondScreen(C,M) ["get"]"#),
        .cannotHappen(.secondScreen, .setRequestorEnded),
        .cannotHappen(.secondScreen, .setRequestorFailed),
        Cell(.secondScreen, .callEntered, "run call", then: #"ready(R) login#1[R] secondScreen(C,M) ["get"] running"#),
        .cannotHappen(.secondScreen, .turnEnded),
        Cell(.secondScreen, .loginRequested, then: #"ready(R) login#1[R] secondScreen(C,M) ["get", "w"]"#),
        Cell(.secondScreen, .providerDialogShown, then: #"ready(R) login#1[R] dialog ["get"]"#),
        Cell(.secondScreen, .providerPicked, "stopPolling", "createSession #1", then: #"ready(R) login#1[R] dialog ["get"]"#),
        Cell(.secondScreen, .sessionOpened, then: #"ready(R) login#1[R] page(C2,M2) ["get"]"#),
        Cell(.secondScreen, .raised, then: #"ready(R) login#1[R] secondScreen(C,M) ["get"] reasons ["W"]"#),
        Cell(.secondScreen, .redirected, "answerStoredState R"),
        Cell(.secondScreen, .joined, then: #"ready(R) login#1[R] secondScreen(C,M) ["get", "w"]"#),
        Cell(.secondScreen, .loginEnded, "stopPolling", "resume get 1", then: "ready(R) last 1"),
        Cell(.secondScreen, .logoutStarted, "startLogoutTimer #2", then: #"ready(R) login#1[R] secondScreen(C,M) ["get"] logout#2 ["w"]"#),
        Cell(.secondScreen, .logoutEnded),
        Cell(.secondScreen, .cancel, "cancelLogin R", then: #"ready(R) login#1[R] secondScreen(C,M) ["get"] closed"#),
        // logout pending
        Cell(.logoutPending, .setRequestorStarted, then: #"reconfiguring(1, R) logout#1 ["logout"]"#),
        .cannotHappen(.logoutPending, .setRequestorEnded),
        .cannotHappen(.logoutPending, .setRequestorFailed),
        Cell(.logoutPending, .callEntered, "run call", then: #"ready(R) logout#1 ["logout"] running"#),
        .cannotHappen(.logoutPending, .turnEnded),
        Cell(.logoutPending, .loginRequested, "displayProviderDialog", then: #"ready(R) login#2[R] dialog ["w"] logout#1 ["logout"]"#),
        Cell(.logoutPending, .providerDialogShown),
        Cell(.logoutPending, .providerPicked, "stopPolling"),
        Cell(.logoutPending, .sessionOpened),
        Cell(.logoutPending, .raised),
        Cell(.logoutPending, .redirected, "endLogout"),
        Cell(.logoutPending, .joined, "resume w 0 Provider not Selected Error"),
        Cell(.logoutPending, .loginEnded, then: #"ready(R) logout#1 ["logout"] last 1"#),
        .cannotHappen(.logoutPending, .logoutStarted),
        Cell(
            .logoutPending, .logoutEnded, "stopLogoutTimer", "reportLogout partner:true", "resume logout 0 User Not Authenticated Error",
            then: "ready(R) last 0 User Not Authenticated Error"),
        Cell(.logoutPending, .cancel, "endLogout", then: #"ready(R) logout#1 ["logout"] closed"#),
        // closed
        Cell(.closed, .setRequestorStarted, then: "reconfiguring(1, R) closed"),
        .cannotHappen(.closed, .setRequestorEnded),
        .cannotHappen(.closed, .setRequestorFailed),
        Cell(.closed, .callEntered, "run call", then: "ready(R) closed running"),
        .cannotHappen(.closed, .turnEnded),
        Cell(.closed, .loginRequested, "refuseLogin w cancelled:true"),
        Cell(.closed, .providerDialogShown),
        Cell(.closed, .providerPicked, "stopPolling"),
        Cell(.closed, .sessionOpened),
        Cell(.closed, .raised),
        Cell(.closed, .redirected, "reportStoredState R"),
        Cell(.closed, .joined, "resume w 0 Provider not Selected Error"),
        Cell(.closed, .loginEnded, then: "ready(R) closed last 1"),
        Cell(.closed, .logoutStarted, "startLogoutTimer #1", then: #"ready(R) logout#1 ["w"] closed"#),
        Cell(.closed, .logoutEnded),
        Cell(.closed, .cancel),
    ]
}
