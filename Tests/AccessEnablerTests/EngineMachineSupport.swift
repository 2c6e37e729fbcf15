@testable import AccessEnabler

/// The machine with plain values: requestors, held calls and waiters are names.
typealias Machine = EngineMachine<String, String, String>

/// The named states of `Sources/AccessEnabler/README.md`, each reached from a fresh machine by events only.
enum NamedState: String, CaseIterable {
    case unset, configuring, reconfiguring, ready, failed
    case partnerPicker = "login at the partner picker"
    case dialog = "login at the provider dialog"
    case page = "login at the login page"
    case completing = "login completing"
    case secondScreen = "login at the second screen"
    case logoutPending = "logout pending"
    case closed

    var machine: Machine {
        var machine = Machine()
        func send(_ events: Machine.Event...) { for event in events { _ = machine.receive(event) } }
        switch self {
        case .unset:
            break
        case .configuring:
            send(.setRequestorStarted)
        case .failed:
            send(.setRequestorStarted, .setRequestorEnded(nil, reasons: []))
        default:
            send(.setRequestorStarted, .setRequestorEnded("R", reasons: []))
        }
        switch self {
        case .reconfiguring:
            send(.setRequestorStarted)
        case .partnerPicker:
            send(.loginRequested("R", "get", partner: true, hasProviders: true))
        case .dialog:
            send(.loginRequested("R", "get", partner: false, hasProviders: true))
        case .page, .completing:
            send(.loginRequested("R", "get", partner: false, hasProviders: true), .providerPicked(tempPass: false))
            send(.sessionOpened(flow: 1, .page(code: "C", mvpd: "M")))
            if self == .completing { send(.redirected) }
        case .secondScreen:
            send(.loginRequested("R", "get", partner: false, hasProviders: true), .providerPicked(tempPass: false))
            send(.sessionOpened(flow: 1, .secondScreen(code: "C", mvpd: "M")))
        case .logoutPending:
            send(.logoutStarted("logout", partner: true))
        case .closed:
            send(.cancel)
        default:
            break
        }
        return machine
    }
}

/// The events of the table's columns, each with fixed values.
enum NamedEvent: String, CaseIterable {
    case setRequestorStarted, setRequestorEnded, setRequestorFailed, waitingCall, loginRequested, providerDialogShown
    case providerPicked, sessionOpened, redirected, joined, loginEnded, logoutStarted, logoutEnded, cancel

    var event: Machine.Event {
        switch self {
        case .setRequestorStarted: .setRequestorStarted
        case .setRequestorEnded: .setRequestorEnded("R2", reasons: [])
        case .setRequestorFailed: .setRequestorEnded(nil, reasons: [])
        case .waitingCall: .waitingCall("call")
        case .loginRequested: .loginRequested("R", "w", partner: false, hasProviders: true)
        case .providerDialogShown: .providerDialogShown(flow: 1)
        case .providerPicked: .providerPicked(tempPass: false)
        case .sessionOpened: .sessionOpened(flow: 1, .page(code: "C2", mvpd: "M2"))
        case .redirected: .redirected
        case .joined: .joined("w")
        case .loginEnded: .loginEnded(.authenticated)
        case .logoutStarted: .logoutStarted("w", partner: false)
        case .logoutEnded: .logoutEnded(flow: nil)
        case .cancel: .cancel
        }
    }
}

extension Machine {
    /// One line: configuration, flow, closed, held calls, last outcome.
    var summary: String {
        var parts: [String] = []
        switch configuration {
        case .unset: parts.append("unset")
        case .configuring(let n, nil): parts.append("configuring(\(n))")
        case .configuring(let n, let previous?): parts.append("reconfiguring(\(n), \(previous))")
        case .ready(let requestor): parts.append("ready(\(requestor))")
        case .failed: parts.append("failed")
        }
        if let login { parts.append("login#\(login.id)[\(login.requestor)] \(login.step.name) \(login.waiters)") }
        if let logout { parts.append("logout#\(logout.id) \(logout.waiters)") }
        if closed { parts.append("closed") }
        if !held.isEmpty { parts.append("held \(held)") }
        if let lastCompleted { parts.append("last \(lastCompleted.name)") }
        return parts.joined(separator: " ")
    }
}

extension Machine.LoginStep {
    var name: String {
        switch self {
        case .partnerPicker: "partnerPicker"
        case .dialog: "dialog"
        case .page(let code, let mvpd): "page(\(code),\(mvpd))"
        case .completing: "completing"
        case .secondScreen(let code, let mvpd): "secondScreen(\(code),\(mvpd))"
        }
    }
}

extension AuthenticationStatus {
    var name: String { errorCode.isEmpty ? "\(status)" : "\(status) \(errorCode)" }
}

extension Machine.Action {
    var name: String {
        switch self {
        case .run(let call): "run \(call)"
        case .resume(let waiter, let outcome): "resume \(waiter) \(outcome.name)"
        case .refuseLogin(let waiter, let requestor, let cancelled): "refuseLogin \(waiter) \(requestor) cancelled:\(cancelled)"
        case .displayProviderDialog: "displayProviderDialog"
        case .startPartnerLogin(let flow): "startPartnerLogin #\(flow)"
        case .createSession(let flow): "createSession #\(flow)"
        case .startPolling(let flow, let code, let mvpd): "startPolling #\(flow) \(code) \(mvpd)"
        case .stopPolling: "stopPolling"
        case .completeLogin(let flow, let code, let mvpd, let requestor): "completeLogin #\(flow) \(code) \(mvpd) \(requestor)"
        case .join: "join"
        case .answerStoredState(let requestor): "answerStoredState \(requestor)"
        case .answer(let outcome): "answer \(outcome.name)"
        case .reportStoredState(let requestor): "reportStoredState \(requestor ?? "nil")"
        case .cancelLogin(let requestor): "cancelLogin \(requestor)"
        case .endLogout: "endLogout"
        case .startLogoutTimer(let flow): "startLogoutTimer #\(flow)"
        case .stopLogoutTimer: "stopLogoutTimer"
        case .reportLogout(let partner): "reportLogout partner:\(partner)"
        }
    }
}
