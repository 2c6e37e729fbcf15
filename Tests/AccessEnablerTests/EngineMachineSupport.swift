@testable import AccessEnabler
import ThreadAffinity

/// The machine with plain values: requestors, held calls and waiters are names.
typealias Machine = EngineMachine<String, String, String>

/// The named states of `Sources/AccessEnabler/README.md`, each reached from a fresh machine by events only.
enum NamedState: String, CaseIterable {
    case unset, configuring, reconfiguring, ready, failed
    case callRunning = "call running"
    case partnerPicker = "login at the partner picker"
    case dialog = "login at the provider dialog"
    case page = "login at the login page"
    case completing = "login completing"
    case secondScreen = "login at the second screen"
    case logoutPending = "logout pending"
    case closed

    var machine: Machine {
        var machine = Machine()
        switch self {
        case .unset:
            break
        case .configuring:
            _ = machine.setRequestorStarted()
        case .failed:
            _ = machine.setRequestorEnded(machine.setRequestorStarted(), nil, reasons: [])
        default:
            _ = machine.setRequestorEnded(machine.setRequestorStarted(), "R", reasons: [])
        }
        switch self {
        case .reconfiguring:
            _ = machine.setRequestorStarted()
        case .callRunning:
            _ = machine.callEntered("first")
            _ = machine.callEntered("next")
        case .partnerPicker:
            _ = machine.loginRequested("R", "get", partner: true, hasProviders: true)
        case .dialog:
            _ = machine.loginRequested("R", "get", partner: false, hasProviders: true)
        case .page, .completing:
            _ = machine.loginRequested("R", "get", partner: false, hasProviders: true)
            _ = machine.providerPicked(tempPass: false)
            _ = machine.sessionOpened(flow: 1, .page(code: "C", mvpd: "M"))
            if self == .completing { _ = machine.redirected() }
        case .secondScreen:
            _ = machine.loginRequested("R", "get", partner: false, hasProviders: true)
            _ = machine.providerPicked(tempPass: false)
            _ = machine.sessionOpened(flow: 1, .secondScreen(Machine.SecondScreen(code: "C", mvpd: "M", notAfter: 0, sentAt: 0)))
            _ = machine.pollArmed(flow: 1, Scheduled {})
        case .logoutPending:
            _ = machine.logoutTimerArmed(flow: machine.logoutStarted("logout", partner: true), Scheduled {})
        case .closed:
            _ = machine.cancel()
        default:
            break
        }
        return machine
    }
}

/// The events of the table's columns, each with fixed values: one per mutating method of the machine.
enum NamedEvent: String, CaseIterable {
    case setRequestorStarted, setRequestorEnded, setRequestorFailed, callEntered, turnEnded, loginRequested
    case providerDialogShown, providerPicked, sessionOpened, raised, redirected, joined, loginEnded, logoutStarted
    case logoutEnded, cancel

    /// Sends the event; returns what the machine said to do, as the table's action names (none: empty).
    func send(to machine: inout Machine) -> [String] {
        func run(_ call: String?) -> [String] { call.map { ["run \($0)"] } ?? [] }
        switch self {
        case .setRequestorStarted:
            _ = machine.setRequestorStarted()
            return []
        case .setRequestorEnded:
            return run(machine.setRequestorEnded(machine.latestSetRequestor, "R2", reasons: []))
        case .setRequestorFailed:
            return run(machine.setRequestorEnded(machine.latestSetRequestor, nil, reasons: [AdvancedStatus(id: "R400", level: "error")]))
        case .callEntered:
            return run(machine.callEntered("call"))
        case .turnEnded:
            return run(machine.turnEnded())
        case .loginRequested:
            switch machine.loginRequested("R", "w", partner: false, hasProviders: true) {
            case .joined: return []
            case .refused(let waiter, let cancelled): return ["refused \(waiter) cancelled:\(cancelled)"]
            case .showProviderDialog(let flow): return ["showProviderDialog #\(flow)"]
            case .startPartnerLogin(let flow): return ["startPartnerLogin #\(flow)"]
            }
        case .providerDialogShown:
            machine.providerDialogShown(flow: 1)
            return []
        case .providerPicked:
            let pick = machine.providerPicked(tempPass: false)
            return (pick.stopPolling != nil ? ["stopPolling"] : []) + (pick.createSession.map { ["createSession #\($0)"] } ?? [])
        case .sessionOpened:
            let opened = machine.sessionOpened(flow: 1, .page(code: "C2", mvpd: "M2"))
            return (opened.stopPolling != nil ? ["stopPolling"] : []) + (opened.startPolling ? ["startPolling"] : [])
        case .raised:
            machine.raised(flow: 1, AdvancedStatus(id: "W", level: "warning"))
            return []
        case .redirected:
            switch machine.redirected() {
            case .endLogout: return ["endLogout"]
            case .completeLogin(let flow, let code, let mvpd, let requestor): return ["completeLogin #\(flow) \(code) \(mvpd) \(requestor)"]
            case .join: return ["join"]
            case .answerStoredState(let requestor): return ["answerStoredState \(requestor)"]
            case .answer(let outcome): return ["answer \(outcome.name)"]
            case .reportStoredState(let requestor): return ["reportStoredState \(requestor ?? "nil")"]
            }
        case .joined:
            return machine.joined("w").map { ["resume w \($0.name)"] } ?? []
        case .loginEnded:
            let end = machine.loginEnded(.authenticated)
            return (end.stopPolling != nil ? ["stopPolling"] : []) + end.resume.map { "resume \($0) 1" }
        case .logoutStarted:
            return ["startLogoutTimer #\(machine.logoutStarted("w", partner: false))"]
        case .logoutEnded:
            guard let end = machine.logoutEnded(flow: nil) else { return [] }
            return (end.stopLogoutTimer != nil ? ["stopLogoutTimer"] : []) + (end.partner ? ["partner"] : [])
                + end.resume.map { "resume \($0) \(end.outcome.name)" }
        case .cancel:
            let cancel = machine.cancel()
            return run(cancel.run) + (cancel.cancelLogin.map { ["cancelLogin \($0)"] } ?? []) + (cancel.endLogout ? ["endLogout"] : [])
        }
    }
}

extension Machine {
    /// One line: configuration, flow, closed, queued calls, last outcome.
    var summary: String {
        var parts: [String] = []
        switch configuration {
        case .unset: parts.append("unset")
        case .configuring(let n, nil): parts.append("configuring(\(n))")
        case .configuring(let n, let previous?): parts.append("reconfiguring(\(n), \(previous))")
        case .ready(let requestor): parts.append("ready(\(requestor))")
        case .failed(let reasons): parts.append(reasons.isEmpty ? "failed" : "failed \(reasons.map(\.id))")
        }
        if let login {
            parts.append("login#\(login.id)[\(login.requestor)] \(login.step.name) \(login.waiters)")
            if !login.reasons.isEmpty { parts.append("reasons \(login.reasons.map(\.id))") }
        }
        if let logout { parts.append("logout#\(logout.id) \(logout.waiters)") }
        if closed { parts.append("closed") }
        if calls.running { parts.append("running") }
        if !calls.queued.isEmpty { parts.append("held \(calls.queued)") }
        if let last = lastEnded { parts.append("last \(last.outcome.name)") }
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
        case .secondScreen(let screen): "secondScreen(\(screen.code),\(screen.mvpd))"
        }
    }
}

extension AuthenticationStatus {
    var name: String { errorCode.isEmpty ? "\(status)" : "\(status) \(errorCode)" }
}
