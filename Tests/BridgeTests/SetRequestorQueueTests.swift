import XCTest

@testable import Bridge

/// One test per cell of the table in `SetRequestorQueue`: state × event → actions and next state. No engine,
/// no network, no sleeps.
final class SetRequestorQueueTests: XCTestCase {
    typealias Queue = SetRequestorQueue<String>

    /// "start a" / "drop a", in order.
    private func names(_ actions: [Queue.Action]) -> [String] {
        actions.map {
            switch $0 {
            case .start(let call): "start \(call)"
            case .drop(let call): "drop \(call)"
            }
        }
    }

    private func configuring(_ n: Int, holding held: [String] = []) -> Queue {
        var queue = Queue()
        for index in 0..<n { _ = queue.receive(.setRequestor("setRequestor\(index)")) }
        for call in held { _ = queue.receive(.call(call, waits: true)) }
        return queue
    }

    private func closed() -> Queue {
        var queue = Queue()
        _ = queue.receive(.close)
        return queue
    }

    // MARK: ready

    func testReadySetRequestorStartsItAndConfigures() {
        var queue = Queue()
        XCTAssertEqual(names(queue.receive(.setRequestor("s"))), ["start s"])
        XCTAssertEqual(queue.state, .configuring(setRequestors: 1))
    }

    func testReadyWaitingCallStarts() {
        var queue = Queue()
        XCTAssertEqual(names(queue.receive(.call("checkAuthentication", waits: true))), ["start checkAuthentication"])
        XCTAssertEqual(queue.state, .ready)
    }

    func testReadyOtherCallStarts() {
        var queue = Queue()
        XCTAssertEqual(names(queue.receive(.call("handleExternalURL", waits: false))), ["start handleExternalURL"])
        XCTAssertEqual(queue.state, .ready)
    }

    func testReadySetRequestorAnsweredDoesNothing() {
        var queue = Queue()
        XCTAssertEqual(names(queue.receive(.setRequestorAnswered)), [])
        XCTAssertEqual(queue.state, .ready)
    }

    func testReadyCloseCloses() {
        var queue = Queue()
        XCTAssertEqual(names(queue.receive(.close)), [])
        XCTAssertEqual(queue.state, .closed)
    }

    // MARK: configuring

    func testConfiguringSetRequestorStartsItAndCountsIt() {
        var queue = configuring(1, holding: ["getAuthentication"])
        XCTAssertEqual(names(queue.receive(.setRequestor("again"))), ["start again"])
        XCTAssertEqual(queue.state, .configuring(setRequestors: 2))
        XCTAssertEqual(queue.held, ["getAuthentication"])
    }

    func testConfiguringWaitingCallIsHeldInOrder() {
        var queue = configuring(1, holding: ["checkAuthentication"])
        XCTAssertEqual(names(queue.receive(.call("getAuthentication", waits: true))), [])
        XCTAssertEqual(queue.held, ["checkAuthentication", "getAuthentication"])
        XCTAssertEqual(queue.state, .configuring(setRequestors: 1))
    }

    func testConfiguringOtherCallStartsAtOnce() {
        var queue = configuring(1, holding: ["getAuthentication"])
        XCTAssertEqual(names(queue.receive(.call("setSelectedProvider", waits: false))), ["start setSelectedProvider"])
        XCTAssertEqual(queue.held, ["getAuthentication"])
    }

    func testConfiguringLastAnswerStartsTheHeldCallsInArrivalOrder() {
        var queue = configuring(1, holding: ["checkAuthentication", "getMetadata", "logout"])
        XCTAssertEqual(names(queue.receive(.setRequestorAnswered)), ["start checkAuthentication", "start getMetadata", "start logout"])
        XCTAssertEqual(queue.state, .ready)
        XCTAssertEqual(queue.held, [])
    }

    func testConfiguringAnswerWithAnotherInFlightKeepsHolding() {
        var queue = configuring(2, holding: ["checkAuthentication"])
        XCTAssertEqual(names(queue.receive(.setRequestorAnswered)), [])
        XCTAssertEqual(queue.state, .configuring(setRequestors: 1))
        XCTAssertEqual(names(queue.receive(.setRequestorAnswered)), ["start checkAuthentication"])
    }

    func testConfiguringCloseDropsEveryHeldCall() {
        var queue = configuring(1, holding: ["getAuthentication", "checkAuthorization"])
        XCTAssertEqual(names(queue.receive(.close)), ["drop getAuthentication", "drop checkAuthorization"])
        XCTAssertEqual(queue.state, .closed)
        XCTAssertEqual(queue.held, [])
    }

    // MARK: closed (cancel is sticky)

    func testClosedSetRequestorIsDropped() {
        var queue = closed()
        XCTAssertEqual(names(queue.receive(.setRequestor("s"))), ["drop s"])
        XCTAssertEqual(queue.state, .closed)
    }

    func testClosedCallsAreDroppedWaitingOrNot() {
        var queue = closed()
        XCTAssertEqual(names(queue.receive(.call("getAuthentication", waits: true))), ["drop getAuthentication"])
        XCTAssertEqual(names(queue.receive(.call("handleExternalURL", waits: false))), ["drop handleExternalURL"])
        XCTAssertEqual(queue.state, .closed)
    }

    func testClosedLateSetRequestorAnswerStartsNothing() {
        var queue = configuring(1, holding: ["getAuthentication"])
        _ = queue.receive(.close)
        XCTAssertEqual(names(queue.receive(.setRequestorAnswered)), [])
        XCTAssertEqual(queue.state, .closed)
    }

    func testClosedCloseAgainDoesNothing() {
        var queue = closed()
        XCTAssertEqual(names(queue.receive(.close)), [])
        XCTAssertEqual(queue.state, .closed)
    }

    /// The list the queue holds is the one `Protocol/README.md` (Lifecycle 3) states.
    func testTheWaitingCallsAreTheDocumentedOnes() {
        XCTAssertEqual(
            MethodSpec.queuedBehindSetRequestor,
            ["checkAuthentication", "getAuthentication", "checkAuthorization", "getAuthorization", "checkPreauthorizedResources", "getMetadata", "logout"])
        for name in ["setOptions", "setSelectedProvider", "getSelectedProvider", "handleExternalURL", "getAuthenticationToken", "init", "rpc.stats"] {
            XCTAssertFalse(MethodTable.byName[name]!.waitsForSetRequestor, name)
        }
    }
}
