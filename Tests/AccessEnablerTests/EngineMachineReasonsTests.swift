@testable import AccessEnabler
import XCTest

/// Which statuses explain which outcome (Protocol/README.md "Failure reasons"), decided by the machine: those
/// raised in a login since it last went to the user, else those of a failed setRequestor. Plain values, no engine.
final class EngineMachineReasonsTests: XCTestCase {
    typealias Machine = EngineMachine<String, String, String>

    let cfg100 = AdvancedStatus(id: "CFG100", level: "warning")
    let reg503 = AdvancedStatus(id: "REG503", level: "warning")
    let regcode = AdvancedStatus(id: "REGCODE", level: "info")
    let n130 = AdvancedStatus(id: "N130", level: "error")

    func loginAtTheSecondScreen() -> Machine {
        var machine = Machine()
        _ = machine.setRequestorEnded(machine.setRequestorStarted(), "R", reasons: [])
        _ = machine.loginRequested("R", "get", partner: false, hasProviders: true)
        _ = machine.sessionOpened(flow: 1, .secondScreen(Machine.SecondScreen(code: "C", mvpd: "M", notAfter: 0, sentAt: 0)))
        return machine
    }

    func testALoginsOutcomeCarriesTheWarningsAndErrorsRaisedInIt() {
        var machine = loginAtTheSecondScreen()
        for status in [regcode, reg503, cfg100] { machine.raised(flow: 1, status) }
        XCTAssertEqual(machine.reasons([n130], ofLogin: true).map(\.id), ["REG503", "CFG100", "N130"])
        // Another call's outcome, made while the login goes on, does not take the login's reasons.
        XCTAssertEqual(machine.reasons([], ofLogin: false), [])
    }

    func testAStatusRaisedForAnEndedOrOtherLoginIsNotKept() {
        var machine = loginAtTheSecondScreen()
        machine.raised(flow: 2, cfg100)
        XCTAssertEqual(machine.reasons([], ofLogin: true), [])
        _ = machine.loginEnded(.failed(SDKErrorCode.userNotAuthenticated))
        machine.raised(flow: 1, reg503)
        XCTAssertEqual(machine.reasons([], ofLogin: true), [])
    }

    func testGoingToTheUserForgetsEarlierReasons() {
        var machine = Machine()
        _ = machine.setRequestorEnded(machine.setRequestorStarted(), "R", reasons: [])
        _ = machine.loginRequested("R", "get", partner: true, hasProviders: true)
        machine.raised(flow: 1, AdvancedStatus(id: "APPL_ERROR", level: "error"))
        XCTAssertEqual(machine.reasons([], ofLogin: true).map(\.id), ["APPL_ERROR"])
        machine.providerDialogShown(flow: 1)
        XCTAssertEqual(machine.reasons([], ofLogin: true), [])
        machine.raised(flow: 1, cfg100)
        _ = machine.sessionOpened(flow: 1, .page(code: "C", mvpd: "M"))
        XCTAssertEqual(machine.reasons([], ofLogin: true), [])
    }

    func testAFailedSetRequestorExplainsLaterFailuresThatHaveNoReasonOfTheirOwn() {
        var machine = Machine()
        let r400 = AdvancedStatus(id: "R400", level: "error")
        _ = machine.setRequestorEnded(machine.setRequestorStarted(), nil, reasons: [regcode, r400])
        XCTAssertEqual(machine.reasons([AdvancedStatus(id: "N000", level: "info")], ofLogin: false), [r400])
        XCTAssertEqual(machine.reasons([n130], ofLogin: false), [n130])
        _ = machine.setRequestorEnded(machine.setRequestorStarted(), "R", reasons: [])
        XCTAssertEqual(machine.reasons([], ofLogin: false), [])
    }

    /// Overlapping setRequestor calls: the one sent last decides, whichever ends last.
    func testTheLastSetRequestorSentDecidesWhicheverEndsLast() {
        var machine = Machine()
        let first = machine.setRequestorStarted()
        let second = machine.setRequestorStarted()
        XCTAssertNil(machine.setRequestorEnded(second, "REF2", reasons: []))
        _ = machine.setRequestorEnded(first, "REF", reasons: [])
        XCTAssertEqual(machine.configuration, .ready("REF2"))

        let r400 = AdvancedStatus(id: "R400", level: "error")
        let third = machine.setRequestorStarted()
        let fourth = machine.setRequestorStarted()
        _ = machine.setRequestorEnded(fourth, nil, reasons: [r400])
        _ = machine.setRequestorEnded(third, "REF", reasons: [])
        XCTAssertEqual(machine.configuration, .failed(reasons: [r400]))

        let fifth = machine.setRequestorStarted()
        let sixth = machine.setRequestorStarted()
        _ = machine.setRequestorEnded(fifth, nil, reasons: [r400])
        _ = machine.setRequestorEnded(sixth, "REF3", reasons: [])
        XCTAssertEqual(machine.configuration, .ready("REF3"))
    }

    /// A call that worked for a login that ended meanwhile answers that login's outcome, even when a
    /// setSelectedProvider with no login in progress ended later (TempPass picked outside a login).
    func testAStaleCallAnswersItsOwnLoginsOutcome() {
        var machine = loginAtTheSecondScreen()
        XCTAssertNil(machine.staleOutcome(of: 1))
        _ = machine.loginEnded(.authenticated)
        _ = machine.loginEnded(.failed(SDKErrorCode.userNotAuthenticated))  // no login in progress
        XCTAssertEqual(machine.staleOutcome(of: 1), .authenticated)
        XCTAssertEqual(machine.staleOutcome(of: 7), .failed(SDKErrorCode.providerNotSelected))
        XCTAssertNil(machine.staleOutcome(of: nil))
    }
}
