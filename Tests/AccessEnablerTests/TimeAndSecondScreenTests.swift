import AccessEnabler
import Foundation
import JSON
import XCTest

@testable import AccessEnabler

/// TempPass, second screen, and expiry driven by the emulator's clock.
final class TimeAndSecondScreenTests: EmulatorTestCase {
    func testTempPassAuthenticatesWithoutALoginPageThenExpires() async throws {
        let client = try makeClient()
        await ready(client)
        let flow = await startLoginAtPicker(client)
        let outcome = await client.engine.setSelectedProvider("TempPass")
        XCTAssertEqual(outcome, .ended(AuthenticationStatus(status: 1, errorCode: "")))
        var callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.count, 4)
        assertTracking(callbacks[safe: 0], event: 2, head: ["TempPass"])
        XCTAssertEqual(callbacks[safe: 1], .setAuthenticationStatus(1, ""))
        assertTracking(callbacks[safe: 2], event: 0, head: ["true", "TempPass"])
        assertStatus(callbacks[safe: 3], id: "N011", level: "info")
        XCTAssertFalse(callbacks.contains { if case .navigate = $0 { true } else { false } })
        let result = await flow.value
        XCTAssertEqual(result, AuthenticationStatus(status: 1, errorCode: ""))

        let play = await client.engine.checkAuthorization("anything", data: nil)
        guard case .token(let token, "anything", _) = play else { return XCTFail("TempPass permits every resource: \(play)") }
        try assertTokenVerifies(token, resource: "anything")
        _ = client.delegate.take()

        try await emulator.advanceClock(seconds: 181)
        let again = await client.engine.setRequestor("REF", serviceProviders: nil)  // the app returns to the foreground
        XCTAssertEqual(again.status, 1)
        _ = client.delegate.take()
        let check = await client.engine.checkAuthentication()
        XCTAssertEqual(check.status, 0)
        XCTAssertEqual(check.errorCode, "User Not Authenticated Error")
        XCTAssertEqual(check.statuses.map(\.id), ["N111"])
        callbacks = client.delegate.take()
        XCTAssertEqual(callbacks[safe: 0], .setAuthenticationStatus(0, "User Not Authenticated Error"))
        assertTracking(callbacks[safe: 1], event: 0, head: ["false", nil, nil, nil])
        assertStatus(callbacks[safe: 2], id: "N111", level: "warning")
    }

    func testSecondScreenLoginCompletedOnTheActivationPage() async throws {
        let base = emulator.baseURL.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        let activation = base + "/activate"
        let client = try makeClient(webView: false, activationURL: activation)
        await ready(client)
        let flow = await startLoginAtPicker(client)
        let outcome = await client.engine.setSelectedProvider("MockMVPD")
        XCTAssertEqual(outcome, .started)
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.count, 2)
        assertTracking(callbacks[safe: 0], event: 2, head: ["MockMVPD"])
        guard case .status(let regcode)? = callbacks[safe: 1] else { return XCTFail("no REGCODE: \(callbacks)") }
        XCTAssertEqual(regcode.id, "REGCODE")
        let code = try XCTUnwrap(regcode.code)
        XCTAssertEqual(regcode.url, activation + "?code=" + code, "the configured page, with the code filled in")
        XCTAssertEqual(regcode.activationURL, activation)
        XCTAssertEqual(regcode.authenticateURL, base + "/api/v2/authenticate/REF/" + code)
        let notAfter = try XCTUnwrap(regcode.notAfter)
        let nowMillis = Int64(Date().timeIntervalSince1970 * 1000)
        XCTAssertEqual(Double(notAfter - nowMillis), 1_800_000, accuracy: 60_000, "code TTL 30 min, epoch ms")

        let end = try await Browser().open(
            try XCTUnwrap(regcode.url), fields: ["mvpd": "MockMVPD", "username": "demo", "password": "demo"])
        if case .page(let status, _) = end { XCTAssertEqual(status, 200) }
        let result = await flow.value
        XCTAssertEqual(result, AuthenticationStatus(status: 1, errorCode: ""))
        let final = client.delegate.take()
        XCTAssertEqual(final[safe: 0], .setAuthenticationStatus(1, ""))
        assertTracking(final[safe: 1], event: 0, head: ["true", "MockMVPD"])
        XCTAssertFalse(final.contains { if case .navigate = $0 { true } else { false } })
    }

    func testSecondScreenCancelStopsPolling() async throws {
        let client = try makeClient(webView: false)
        await ready(client)
        let flow = await startLoginAtPicker(client)
        let started = await client.engine.setSelectedProvider("MockMVPD")
        XCTAssertEqual(started, .started)
        _ = client.delegate.take()
        let cancelled = await client.engine.setSelectedProvider(nil)
        XCTAssertEqual(cancelled, .ended(AuthenticationStatus(status: 0, errorCode: "Provider not Selected Error")))
        let result = await flow.value
        XCTAssertEqual(result, AuthenticationStatus(status: 0, errorCode: "Provider not Selected Error"))
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks[safe: 0], .setAuthenticationStatus(0, "Provider not Selected Error"))
        assertStatus(callbacks.last, id: "N005")
        let polling = await client.engine.isPolling
        XCTAssertFalse(polling)
        try await Task.sleep(for: .milliseconds(800))
        XCTAssertEqual(client.delegate.take(), [], "no callback after the cancel")
    }

    func testProfileExpiresWithTheEmulatorClock() async throws {
        let client = try makeClient()
        await ready(client)
        try await login(client)
        try await emulator.advanceClock(seconds: 25 * 3600)
        let again = await client.engine.setRequestor("REF", serviceProviders: nil)
        XCTAssertEqual(again.status, 1)
        let callbacks = client.delegate.take()
        XCTAssertTrue(callbacks.contains { if case .status(let s) = $0 { s.id == "CFG100" } else { false } }, "skew over 5 min")
        let check = await client.engine.checkAuthentication()
        XCTAssertEqual(check, AuthenticationStatus(status: 0, errorCode: "User Not Authenticated Error"))
        assertStatus(client.delegate.take().last, id: "N000")
    }

    func testAccessTokenExpiryRefreshesOnceWithTheSameCredentials() async throws {
        let client = try makeClient()
        await ready(client)
        try await login(client)
        let scope = RestClient.scope(baseURL: BackendURL(emulator.baseURL), softwareStatement: Self.softwareStatement)
        let credentials = try await XCTUnwrapAsync(await client.store.clientCredentials(scope))
        let token = try await XCTUnwrapAsync(await client.store.accessToken(scope))
        // 6 h + 1 min later the cached token is refused (401); the engine refreshes it once and retries.
        try await emulator.advanceClock(seconds: 21_660)
        let outcome = await client.engine.checkAuthorization("ch1", data: nil)
        guard case .token(let media, _, _) = outcome else { return XCTFail("not authorized after refresh: \(outcome)") }
        try assertTokenVerifies(media, resource: "ch1")
        let credentialsAfter = try await client.store.clientCredentials(scope)
        XCTAssertEqual(credentialsAfter, credentials, "never re-register to refresh")
        let tokenAfter = try await client.store.accessToken(scope)
        XCTAssertNotEqual(tokenAfter?.token, token.token)
        XCTAssertEqual(tokenAfter?.clientID, credentials.id)
    }
}

/// XCTUnwrap for a value computed before the call (XCTUnwrap's autoclosure cannot await).
func XCTUnwrapAsync<T>(_ value: T?, file: StaticString = #filePath, line: UInt = #line) async throws -> T {
    try XCTUnwrap(value, file: file, line: line)
}

extension TimeAndSecondScreenTests {
    func testSecondScreenCodeExpiryEndsTheFlow() async throws {
        let client = try makeClient(webView: false)
        await ready(client)
        let flow = await startLoginAtPicker(client)
        let started = await client.engine.setSelectedProvider("MockMVPD")
        XCTAssertEqual(started, .started)
        _ = client.delegate.take()
        try await emulator.advanceClock(seconds: 1801)
        let result = await flow.value
        // The code is over at the backend: the user is not authenticated, and the outcome says why, with the
        // reasons its polls raised: the backend's clock, moved 30 minutes ahead, is off the device's (CFG100),
        // then the code expired (N130).
        XCTAssertEqual(result.status, 0)
        XCTAssertEqual(result.errorCode, "User Not Authenticated Error")
        XCTAssertEqual(result.statuses.map(\.id), ["CFG100", "N130"])
        let callbacks = client.delegate.take()
        XCTAssertEqual(
            callbacks.filter { if case .setAuthenticationStatus = $0 { true } else { false } },
            [.setAuthenticationStatus(0, "User Not Authenticated Error")])
        XCTAssertTrue(callbacks.contains { if case .status(let status) = $0 { status.id == "N130" } else { false } })
    }

    /// No activation page configured: REGCODE's `url` is the authenticate URL, and a phone that opens it, and
    /// nothing else, logs in and ends on an http(s) page of the backend, not on the TV app's `adobepass://` scheme.
    func testSecondScreenLoginThroughTheAuthenticateURLAloneEndsOnAWebPage() async throws {
        let client = try makeClient(webView: false)
        await ready(client)
        let flow = await startLoginAtPicker(client)
        let started = await client.engine.setSelectedProvider("MockMVPD")
        XCTAssertEqual(started, .started)
        let callbacks = client.delegate.take()
        guard case .status(let regcode)? = callbacks[safe: 1] else { return XCTFail("no REGCODE: \(callbacks)") }
        let code = try XCTUnwrap(regcode.code)
        let base = emulator.baseURL.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        XCTAssertEqual(regcode.authenticateURL, base + "/api/v2/authenticate/REF/" + code)
        XCTAssertEqual(regcode.url, regcode.authenticateURL)
        XCTAssertNil(regcode.activationURL)
        XCTAssertFalse(regcode.url?.hasSuffix("/activate") ?? true, "no invented activation page")

        let end = try await Browser(redirectURL: "adobepass://").open(
            try XCTUnwrap(regcode.authenticateURL), fields: ["username": "demo", "password": "demo"])
        guard case .page(200, let body) = end else { return XCTFail("the phone did not end on a web page: \(end)") }
        XCTAssertTrue(body.contains("You are signed in"), body)
        let result = await flow.value
        XCTAssertEqual(result, AuthenticationStatus(status: 1, errorCode: ""))
    }

    /// A second-screen host with an http(s) redirect URL sends it with the session, and the phone ends there.
    func testSecondScreenSessionKeepsAnHTTPSRedirectURL() async throws {
        let client = try makeClient(webView: false, redirectURL: "https://tv.example/signed-in")
        await ready(client)
        let flow = await startLoginAtPicker(client)
        let started = await client.engine.setSelectedProvider("MockMVPD")
        XCTAssertEqual(started, .started)
        guard case .status(let regcode)? = client.delegate.take()[safe: 1] else { return XCTFail("no REGCODE") }
        let end = try await Browser(redirectURL: "https://tv.example/").open(
            try XCTUnwrap(regcode.authenticateURL), fields: ["username": "demo", "password": "demo"])
        XCTAssertEqual(end, .redirected("https://tv.example/signed-in"))
        let result = await flow.value
        XCTAssertEqual(result, AuthenticationStatus(status: 1, errorCode: ""))
    }

    /// REG100 comes on a poll once 30 s have passed by the engine's clock (moved by the backend's `Date`, here the
    /// emulator's clock 40 s ahead), with the code, its expiry and the seconds left; never as a reason.
    func testSecondScreenCountdownEveryThirtySecondsOfTheEnginesClock() async throws {
        let client = try makeClient(webView: false)
        await ready(client)
        let flow = await startLoginAtPicker(client)
        let started = await client.engine.setSelectedProvider("MockMVPD")
        XCTAssertEqual(started, .started)
        guard case .status(let regcode)? = client.delegate.take()[safe: 1] else { return XCTFail("no REGCODE") }
        let notAfter = try XCTUnwrap(regcode.notAfter)
        // Two polls (300 ms apart) with the clock where it was: no countdown yet.
        let quiet = await client.delegate.wait(timeout: 0.7) { if case .status(let s) = $0 { s.id == "REG100" } else { false } }
        XCTAssertFalse(quiet, "REG100 before 30 s had passed")
        try await emulator.advanceClock(seconds: 40)
        await client.delegate.arrived { if case .status(let s) = $0 { s.id == "REG100" } else { false } }
        let statuses = client.delegate.take().compactMap { if case .status(let s) = $0, s.id == "REG100" { s } else { nil } }
        XCTAssertEqual(statuses.count, 1, "at most one per 30 s")
        let countdown = try XCTUnwrap(statuses.first)
        XCTAssertEqual(countdown.level, "info")
        XCTAssertEqual(countdown.code, regcode.code)
        XCTAssertEqual(countdown.notAfter, notAfter)
        let left = try XCTUnwrap(countdown.secondsLeft)
        XCTAssertEqual(Double(left), 1800 - 40, accuracy: 5)
        _ = await client.engine.setSelectedProvider(nil)
        let result = await flow.value
        XCTAssertFalse(result.statuses.contains { $0.id == "REG100" })
    }
}
