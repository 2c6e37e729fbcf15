import AccessEnabler
import JSON
import JSONRPC
import XCTest

@testable import Bridge

/// `$/cancelRequest` (Protocol/README.md, "Cancelling a request") at the bridge: the call's task is cancelled, its
/// response becomes -32800 after its notifications, and other calls and ids are left alone.
final class CancelRequestTests: XCTestCase {
    private func ready() throws -> Harness {
        let harness = try Harness()
        harness.call("setRequestor", ["requestorID": "REF"])
        return harness
    }

    func testACancelledCallIsAnsweredRequestCancelledAfterItsNotifications() throws {
        let harness = try ready()
        let before = harness.connection.all.count
        let waiting = harness.send("getAuthorization", ["resource": "waits"])
        let other = harness.call("checkAuthorization", ["resource": "ch1"])
        XCTAssertTrue(other.last?.answers(waiting + 1) == true, "the other call is answered while the first waits")
        harness.instance.handle(method: "$/cancelRequest", params: ["id": .integer(waiting)], id: nil)
        let written = Array(harness.connection.waitForAnswer(waiting).dropFirst(before))
        let failedAt = written.firstIndex { $0.kind == "tokenRequestFailed" }
        XCTAssertNotNil(failedAt)
        XCTAssertEqual(written.last, .error(RequestID(waiting), .requestCancelled(method: "getAuthorization")))
        XCTAssertEqual(ErrorObject.requestCancelled(method: "getAuthorization").code.rawValue, -32800)
        XCTAssertEqual(harness.statistics.callsInFlight.load(ordering: .relaxed), 0)
    }

    func testUnknownAndAnsweredIdsAreIgnoredAndARequestFormIsAnsweredEmpty() throws {
        let harness = try ready()
        let answered = harness.send("checkAuthentication")
        _ = harness.connection.waitForAnswer(answered)
        let count = harness.connection.all.count
        harness.instance.handle(method: "$/cancelRequest", params: ["id": .integer(answered)], id: nil)
        harness.instance.handle(method: "$/cancelRequest", params: ["id": "nobody"], id: nil)
        XCTAssertEqual(harness.connection.all.count, count, "notifications are never answered")
        XCTAssertEqual(harness.callFresh("$/cancelRequest", ["id": 99]), [.result(RequestID(answered + 1), [:])])
        let refused = harness.callFresh("$/cancelRequest", ["id": true])
        guard case .error(_, let error) = refused.last else { return XCTFail("\(refused)") }
        XCTAssertEqual(error.code, .invalidParams)
    }
}
