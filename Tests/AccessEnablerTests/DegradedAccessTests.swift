import JSON
import XCTest

@testable import AccessEnabler

/// Degraded access reaches the delegate (Protocol/README.md, Values): a degradation rule set on MockMVPD through
/// the emulator's `/__admin/degradation` grants access, and the advisory status says so.
final class DegradedAccessTests: EmulatorTestCase {
    func testAnAuthorizationUnderAnAuthorizeAllRuleIsGrantedWithZ010() async throws {
        let client = try makeClient()
        await ready(client)
        try await login(client)
        try await emulator.rule("degradation", ["mvpd": "MockMVPD", "rule": "AuthZAll"])
        let outcome = await client.engine.authorize("ch2", data: nil, loginIfNeeded: false)
        guard case .token(let token, let resource, _) = outcome else { return XCTFail("not granted: \(outcome)") }
        XCTAssertEqual(resource, "ch2")
        try assertTokenVerifies(token, resource: "ch2")
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.first, .setToken(token, "ch2"))
        assertStatus(callbacks[safe: 2], id: "Z010", level: "warning")
        if case .status(let status)? = callbacks[safe: 2] { XCTAssertEqual(status.resource, "ch2") }
    }

    func testALoginUnderAnAuthenticateAllRuleEndsWithoutAPageAndSaysN010() async throws {
        let client = try makeClient()
        await ready(client)
        try await emulator.rule("degradation", ["mvpd": "MockMVPD", "rule": "AuthNAll"])
        let flow = await startLoginAtPicker(client)
        _ = await client.engine.setSelectedProvider("MockMVPD")
        let status = await flow.value
        XCTAssertEqual(status, AuthenticationStatus(status: 1, errorCode: ""))
        let callbacks = client.delegate.take()
        XCTAssertFalse(callbacks.contains { if case .navigate = $0 { true } else { false } })
        let statuses = callbacks.compactMap { if case .status(let status) = $0 { status.id } else { nil } }
        XCTAssertEqual(statuses, ["N010"])
    }
}
