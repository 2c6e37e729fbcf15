import JSON
import XCTest

@testable import AccessEnabler

/// checkPreauthorizedResources against the emulator's rules (Protocol/README.md, "Preauthorization"): chunks after
/// `too_many_resources`, items saying retry asked again, a failed chunk's resources left out with P100, Z010 for
/// permits under a degradation rule.
final class PreauthorizationTests: EmulatorTestCase {
    static let path = "/api/v2/REF/decisions/preauthorize/MockMVPD"

    /// `count` distinct resources; every third is an MRSS item of ch1, which the demo user may watch.
    func resources(_ count: Int) -> [String] {
        (0..<count).map { $0 % 3 == 0 ? "<rss><channel><title>ch1</title><item><guid>\($0)</guid></item></channel></rss>" : "show-\($0)" }
    }

    func loggedIn() async throws -> Client {
        let client = try makeClient()
        await ready(client)
        try await login(client)
        return client
    }

    func testAListOverTheBackendsLimitIsMergedFromChunksInTheCallersOrder() async throws {
        let client = try await loggedIn()
        let asked = resources(23)
        let expected = asked.enumerated().filter { $0.offset % 3 == 0 }.map(\.element)
        let whole = await client.engine.checkPreauthorizedResources(asked, cache: false).resources
        XCTAssertEqual(whole, expected)
        XCTAssertEqual(client.delegate.take(), [.preauthorizedResources(expected)])
        try await emulator.rule("limits", ["maxPreauthorizeResources": 5])
        let chunked = await client.engine.checkPreauthorizedResources(asked, cache: false).resources
        XCTAssertEqual(chunked, expected)
        XCTAssertEqual(client.delegate.take(), [.preauthorizedResources(expected)])
        let size = await client.engine.preauthorizeChunkSize["REF"]
        XCTAssertEqual(size, 5)
        // A limit of three: chunks of five are refused too, and the size goes down to three.
        try await emulator.rule("limits", ["maxPreauthorizeResources": 3])
        let smaller = await client.engine.checkPreauthorizedResources(asked + asked, cache: false).resources
        XCTAssertEqual(smaller, expected)
        let shrunk = await client.engine.preauthorizeChunkSize["REF"]
        XCTAssertEqual(shrunk, 3)
    }

    func testAFailedChunkLeavesItsResourcesOutAndSaysP100() async throws {
        let client = try await loggedIn()
        let asked = resources(10)
        try await emulator.rule("limits", ["maxPreauthorizeResources": 5])
        _ = await client.engine.checkPreauthorizedResources(asked, cache: false).resources
        _ = client.delegate.take()
        try await emulator.fault(method: "POST", path: Self.path, kind: "status", value: 500, count: 1)
        let partial = await client.engine.checkPreauthorizedResources(asked, cache: true).resources
        XCTAssertEqual(partial, [asked[6], asked[9]])
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.first, .preauthorizedResources([asked[6], asked[9]]))
        assertStatus(callbacks[safe: 1], id: "P100", level: "error")
        if case .status(let status)? = callbacks[safe: 1] {
            XCTAssertEqual(status.details, "No decision for 5 of 10 resources: internal_server_error (Injected fault: HTTP 500.)")
        }
        XCTAssertEqual(callbacks.count, 2)
    }

    func testItemsSayingRetryAreAskedAgainAtMostTwice() async throws {
        let client = try await loggedIn()
        let asked = resources(4)
        try await emulator.rule("item-errors", ["resource": .string(asked[0]), "code": "network_received_error", "count": 2])
        try await emulator.rule("item-errors", ["resource": .string(asked[3]), "code": "network_connection_timeout", "count": 3])
        let answered = await client.engine.checkPreauthorizedResources(asked, cache: false).resources
        // asked[0] is answered on the second retry; asked[3] would be on a third, which is never made.
        XCTAssertEqual(answered, [asked[0]])
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.first, .preauthorizedResources([asked[0]]))
        assertStatus(callbacks[safe: 1], id: "P100", level: "error")
    }

    /// A resource whose retry failed with its chunk and that the next retry answered has its decision: no P100 (a
    /// breaking pass: it was reported permitted and counted in P100's "No decision for 1 of 2").
    func testARetryThatALaterRetryAnsweredIsNotCountedUnanswered() async throws {
        let client = try await loggedIn()
        let asked = ["ch1", "ch2"]
        try await emulator.rule("item-errors", ["resource": "ch1", "code": "network_received_error", "count": 1])
        // The first retry (the second request) fails whole; the second retry is answered.
        try await emulator.fault(method: "POST", path: Self.path, kind: "status", value: 503, count: 1, skip: 1)
        let answered = await client.engine.checkPreauthorizedResources(asked, cache: false).resources
        XCTAssertEqual(answered, ["ch1"])
        XCTAssertEqual(client.delegate.take(), [.preauthorizedResources(["ch1"])])
        let calls = try await emulator.requests().filter { $0["path"]?.stringValue == Self.path }
        XCTAssertEqual(calls.map { $0["resources"]?.arrayValue?.count }, [2, 1, 1])
    }

    func testPermitsUnderADegradationRuleAddZ010() async throws {
        let client = try await loggedIn()
        try await emulator.rule("degradation", ["mvpd": "MockMVPD", "rule": "AuthZAll"])
        let answered = await client.engine.checkPreauthorizedResources(["ch2", "ch1"], cache: false).resources
        XCTAssertEqual(answered, ["ch2", "ch1"])
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.first, .preauthorizedResources(["ch2", "ch1"]))
        assertStatus(callbacks[safe: 1], id: "Z010", level: "warning")
        XCTAssertEqual(callbacks.count, 2)
    }
}
