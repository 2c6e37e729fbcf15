import AccessEnabler
import Foundation
import JSON
import XCTest

/// Service providers, emulator faults, and persistence across a SIGKILL.
final class ResilienceTests: EmulatorTestCase {
    func testTwoServiceProvidersOneDownOneSlow() async throws {
        try await emulator.fault(method: "GET", path: "/api/v2/REF/configuration", kind: "latency", value: 600, count: 1)
        let client = try makeClient()
        let down = try BackendURL("http://127.0.0.1:1")
        let status = await client.engine.setRequestor("REF", serviceProviders: [down, BackendURL(emulator.baseURL)])
        XCTAssertEqual(status.status, 1)
        XCTAssertEqual(client.delegate.take(), [.setRequestorComplete(1)])
        try await login(client)
        let play = await client.engine.checkAuthorization("ch1", data: nil)
        guard case .token = play else { return XCTFail("MVPD not paired with the live service provider: \(play)") }
    }

    /// A plain-http provider off loopback is no `BackendURL`, so the engine is left none to ask: CFG404.
    func testNonLoopbackHTTPServiceProvidersAreRefused() async throws {
        XCTAssertThrowsError(try BackendURL("http://example.com"))
        let client = try makeClient()
        let status = await client.engine.setRequestor("REF", serviceProviders: [])
        XCTAssertEqual(status.status, 0)
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.first, .setRequestorComplete(0))
        assertStatus(callbacks.last, id: "CFG404")
    }

    /// Each fault kind on the authorization decision ends in exactly one terminal callback.
    func testEveryFaultKindEndsAuthorizationWithOneTerminalCallback() async throws {
        let client = try makeClient(requestTimeout: .seconds(1))
        await ready(client)
        try await login(client)
        let path = "/api/v2/REF/decisions/authorize/MockMVPD"
        let cases: [(kind: String, value: JSON?, code: String, status: String)] = [
            ("latency", 2500, "Generic Authorization Error", "Z500"),
            ("status", 500, "Internal Authorization Error", "Z500"),
            ("status", 503, "Internal Authorization Error", "Z500"),
            ("malformed", nil, "Generic Authorization Error", "Z500"),
            ("truncated", nil, "Generic Authorization Error", "Z500"),
            ("contentType", nil, "Generic Authorization Error", "Z500"),
            ("drop", nil, "Generic Authorization Error", "Z500"),
            ("throttle", nil, "Generic Authorization Error", "Z100"),
        ]
        for fault in cases {
            try await emulator.clearFaults()
            try await emulator.fault(method: "POST", path: path, kind: fault.kind, value: fault.value, count: 10)
            let outcome = await client.engine.checkAuthorization("ch1", data: nil)
            guard case .failed("ch1", fault.code, "", let statuses) = outcome else {
                XCTFail("\(fault.kind): \(outcome)")
                continue
            }
            XCTAssertEqual(statuses.map(\.id), [fault.status], fault.kind)
            let callbacks = client.delegate.take()
            let terminal = callbacks.filter {
                switch $0 {
                case .setToken, .tokenRequestFailed: return true
                default: return false
                }
            }
            XCTAssertEqual(terminal, [.tokenRequestFailed("ch1", fault.code, "")], fault.kind)
            assertStatus(callbacks.last, id: fault.status)
        }
        try await emulator.clearFaults()
        let healthy = await client.engine.checkAuthorization("ch1", data: nil)
        guard case .token = healthy else { return XCTFail("did not recover: \(healthy)") }
    }

    func testThrottleIsRetriedAfterASecond() async throws {
        let client = try makeClient()
        await ready(client)
        try await login(client)
        try await emulator.fault(method: "POST", path: "/api/v2/REF/decisions/authorize/MockMVPD", kind: "throttle", count: 1)
        let started = Date()
        let outcome = await client.engine.checkAuthorization("ch1", data: nil)
        guard case .token = outcome else { return XCTFail("429 once should be retried: \(outcome)") }
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 1.0, "waits at least 1 s after a 429")
    }

    func testFaultsDuringLoginEndTheFlowOnce() async throws {
        let client = try makeClient(requestTimeout: .seconds(1))
        await ready(client)
        try await emulator.fault(method: "POST", path: "/api/v2/REF/sessions", kind: "drop", count: 5)
        let flow = await startLoginAtPicker(client)
        let outcome = await client.engine.setSelectedProvider("MockMVPD")
        guard case .ended(let ended) = outcome else { return XCTFail("the login went on: \(outcome)") }
        // The backend did not answer: CFG404 says so (Protocol/README.md, "Failure reasons").
        XCTAssertEqual(ended.status, 0)
        XCTAssertEqual(ended.errorCode, "Provider not Available Error")
        XCTAssertEqual(ended.statuses.map(\.id), ["CFG404"])
        let result = await flow.value
        XCTAssertEqual(result, ended)
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.filter { if case .setAuthenticationStatus = $0 { true } else { false } }.count, 1)
    }
}

extension ResilienceTests {
    /// Each fault kind on the configuration ends setRequestor with setRequestorComplete(0) and one status.
    func testEveryFaultKindEndsSetRequestorWithOneTerminalCallback() async throws {
        let cases: [(kind: String, value: JSON?, status: String)] = [
            ("latency", 2500, "CFG404"),
            ("status", 500, "CFG500"),
            ("status", 404, "CFG400"),
            ("malformed", nil, "CFG500"),
            ("truncated", nil, "CFG404"),
            ("contentType", nil, "CFG500"),
            ("drop", nil, "CFG404"),
            ("throttle", nil, "CFG429"),
        ]
        for fault in cases {
            try await emulator.clearFaults()
            try await emulator.fault(method: "GET", path: "/api/v2/REF/configuration", kind: fault.kind, value: fault.value, count: 10)
            let client = try makeClient(requestTimeout: .seconds(1))
            let status = await client.engine.setRequestor("REF", serviceProviders: nil)
            XCTAssertEqual(status.status, 0, fault.kind)
            let callbacks = client.delegate.take()
            XCTAssertEqual(callbacks.count, 2, "\(fault.kind): \(callbacks)")
            XCTAssertEqual(callbacks.first, .setRequestorComplete(0), fault.kind)
            assertStatus(callbacks.last, id: fault.status)
        }
    }

    func testMalformedSoftwareStatementReportsR400() async throws {
        let store = try TokenStore(directory: temporaryDirectory())
        let delegate = RecordingDelegate()
        let engine = Engine(
            configuration: AccessEnablerConfiguration(backendURL: BackendURL(emulator.baseURL), softwareStatement: "not-a-jwt"),
            store: store,
            delegate: delegate)
        let status = await engine.setRequestor("REF", serviceProviders: nil)
        XCTAssertEqual(status.status, 0)
        let callbacks = delegate.take()
        XCTAssertEqual(callbacks.count, 2)
        XCTAssertEqual(callbacks.first, .setRequestorComplete(0))
        assertStatus(callbacks.last, id: "R400", level: "error")
    }

    func testTokenEndpointFailureReportsR401() async throws {
        try await emulator.fault(method: "POST", path: "/o/client/token", kind: "status", value: 400, count: 10)
        let client = try makeClient()
        let status = await client.engine.setRequestor("REF", serviceProviders: nil)
        XCTAssertEqual(status.status, 0)
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.first, .setRequestorComplete(0))
        assertStatus(callbacks.last, id: "R401", level: "error")
    }
}

extension ResilienceTests {
    /// A backend that forgot the client (`invalid_client`) gets one new registration; the profile it no longer
    /// knows is dropped when setRequestor synchronizes.
    func testForgottenClientRegistersAgainAndDropsTheStaleProfile() async throws {
        let client = try makeClient()
        await ready(client)
        try await login(client)
        try await emulator.reset()
        let status = await client.engine.setRequestor("REF", serviceProviders: nil)
        XCTAssertEqual(status.status, 1)
        XCTAssertEqual(client.delegate.take(), [.setRequestorComplete(1)])
        let check = await client.engine.checkAuthentication()
        XCTAssertEqual(check, AuthenticationStatus(status: 0, errorCode: "User Not Authenticated Error"))
        try await login(client)
        let play = await client.engine.checkAuthorization("ch1", data: nil)
        guard case .token = play else { return XCTFail("\(play)") }
    }
}
