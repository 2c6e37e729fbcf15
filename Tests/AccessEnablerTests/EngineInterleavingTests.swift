import Foundation
import JSON
import Synchronization
import XCTest

@testable import AccessEnabler

/// The interleavings an app produces, replayed on the engine with a scripted backend (`ScriptedHTTP`) whose
/// answers the test holds and releases. Every wait is on an event (a request arriving, a callback made, a call
/// held by the machine), never on a sleep.
final class EngineInterleavingTests: XCTestCase {
    private let redirect = "adobepass://ios.app"

    private func makeEngine() throws -> (Engine, RecordingDelegate, ScriptedHTTP) {
        let http = ScriptedHTTP()
        var configuration = AccessEnablerConfiguration(backendURL: try BackendURL("https://sp.example"), softwareStatement: "a.b.c")
        configuration.httpClient = http
        let delegate = RecordingDelegate()
        return (
            Engine(configuration: configuration, store: try TokenStore(directory: temporaryDirectory()), delegate: delegate),
            delegate, http
        )
    }

    /// getAuthentication at the provider dialog, then MockMVPD picked: the login page is open.
    private func openLoginPage(_ engine: Engine, _ delegate: RecordingDelegate) async -> Task<AuthenticationStatus, Never> {
        let login = Task { await engine.getAuthentication(forceAuthn: false, data: nil, filter: nil) }
        await delegate.arrived { if case .displayProviderDialog = $0 { true } else { false } }
        let picked = await engine.setSelectedProvider("MockMVPD")
        XCTAssertEqual(picked, .started)
        return login
    }

    func testRepeatedSetRequestorWithHandleExternalURLCompletesTheLogin() async throws {
        let (engine, delegate, http) = try makeEngine()
        let first = await engine.setRequestor("REF", serviceProviders: nil)
        XCTAssertEqual(first.status, 1)
        let login = await openLoginPage(engine, delegate)
        XCTAssertEqual(delegate.take().filter(\.isNavigate).count, 1)
        http.hold(next: "/configuration")
        let again = Task { await engine.setRequestor("REF", serviceProviders: nil) }
        await http.arrived("/configuration")
        // The configuration is still on the way: the redirect completes the login under the previous requestor.
        let handled = try await engine.handleExternalURL(redirect)
        XCTAssertEqual(handled, .authenticated)
        let loggedIn = await login.value
        XCTAssertEqual(loggedIn, .authenticated)
        XCTAssertEqual(delegate.take().first, .setAuthenticationStatus(1, ""))
        http.release("/configuration")
        let repeated = await again.value
        XCTAssertEqual(repeated.status, 1)
        XCTAssertEqual(delegate.take().first, .setRequestorComplete(1))
        let check = await engine.checkAuthentication()
        XCTAssertEqual(check, .authenticated)
    }

    func testRepeatedSetRequestorWithSetSelectedProviderAtThePickerGoesOn() async throws {
        let (engine, delegate, http) = try makeEngine()
        let first = await engine.setRequestor("REF", serviceProviders: nil)
        XCTAssertEqual(first.status, 1)
        let login = Task { await engine.getAuthentication(forceAuthn: false, data: nil, filter: nil) }
        await delegate.arrived { if case .displayProviderDialog = $0 { true } else { false } }
        http.hold(next: "/configuration")
        let again = Task { await engine.setRequestor("REF", serviceProviders: nil) }
        await http.arrived("/configuration")
        let picked = await engine.setSelectedProvider("MockMVPD")
        XCTAssertEqual(picked, .started)
        XCTAssertEqual(delegate.take().filter(\.isNavigate).count, 1, "the login page opens during the configuration")
        http.release("/configuration")
        let repeated = await again.value
        XCTAssertEqual(repeated.status, 1)
        let handled = try await engine.handleExternalURL(redirect)
        XCTAssertEqual(handled, .authenticated)
        let loggedIn = await login.value
        XCTAssertEqual(loggedIn, .authenticated)
    }

    func testCallsDuringAConfigurationWaitAndComeAfterIt() async throws {
        let (engine, delegate, http) = try makeEngine()
        http.hold(next: "/configuration")
        let configured = Task { await engine.setRequestor("REF", serviceProviders: nil) }
        await http.arrived("/configuration")
        let check = Task { await engine.checkAuthentication() }
        await engine.heldCalls(1)
        XCTAssertEqual(delegate.take(), [])
        http.release("/configuration")
        let status = await configured.value
        XCTAssertEqual(status.status, 1)
        let checked = await check.value
        XCTAssertEqual(checked, .failed("User Not Authenticated Error"))
        XCTAssertEqual(
            Array(delegate.take().prefix(2)), [.setRequestorComplete(1), .setAuthenticationStatus(0, "User Not Authenticated Error")])
    }

    func testCloseDuringTheConfigurationStartsNothingAfterIt() async throws {
        let (engine, delegate, http) = try makeEngine()
        http.hold(next: "/configuration")
        let configured = Task { await engine.setRequestor("REF", serviceProviders: nil) }
        await http.arrived("/configuration")
        let login = Task { await engine.getAuthentication(forceAuthn: false, data: nil, filter: nil) }
        await engine.heldCalls(1)
        await engine.cancel()
        let cancelled = await login.value
        XCTAssertEqual(cancelled, .failed("Generic Authentication Error"))
        let sentBeforeRelease = http.requests.count
        http.release("/configuration")
        let status = await configured.value
        XCTAssertEqual(status.status, 1)
        // Cancel is sticky: a login asked for afterwards ends at once, with no provider dialog.
        let later = await engine.getAuthentication(forceAuthn: false, data: nil, filter: nil)
        XCTAssertEqual(later, .failed("Generic Authentication Error"))
        XCTAssertFalse(delegate.callbacks.contains { if case .displayProviderDialog = $0 { true } else { false } })
        XCTAssertEqual(http.requests.count, sentBeforeRelease, "no request after the cancel: \(http.requests)")
    }
}

extension Engine {
    /// Returns once the machine holds `count` calls waiting for setRequestor (yields, no sleep).
    func heldCalls(_ count: Int) async {
        while heldCallCount < count { await Task.yield() }
    }

    var heldCallCount: Int { machine.calls.queued.count }
}

extension Callback {
    var isNavigate: Bool { if case .navigate = self { true } else { false } }
}

/// A backend in memory: DCR, one requestor REF with one MVPD (MockMVPD), sessions that open a login page and a
/// profile once the page came back; or, given `backend`, every request sent on to it (a real emulator). A request
/// whose path ends as `hold(next:)` said waits until `release`.
final class ScriptedHTTP: HTTPClient {
    private let backend: (any HTTPClient)?

    init(backend: (any HTTPClient)? = nil) {
        self.backend = backend
    }

    private struct State {
        var requests: [String] = []
        var holds: [String] = []
        var held: [String: CheckedContinuation<Void, Never>] = [:]
        var arrivals: [(String, CheckedContinuation<Void, Never>)] = []
        /// A login page came back (a profile was read by its code): the device has a profile from then on.
        var loggedIn = false
    }
    private let state = Mutex(State())

    /// "METHOD path" of every request, in arrival order.
    var requests: [String] { state.withLock { $0.requests } }

    /// The next request whose path ends with `suffix` waits until `release(suffix)`.
    func hold(next suffix: String) { state.withLock { $0.holds.append(suffix) } }

    func release(_ suffix: String) { state.withLock { $0.held.removeValue(forKey: suffix) }?.resume() }

    /// Returns once a request ending with `suffix` is held.
    func arrived(_ suffix: String) async {
        await withCheckedContinuation { continuation in
            let held = state.withLock { state in
                if state.held[suffix] != nil { return true }
                state.arrivals.append((suffix, continuation))
                return false
            }
            if held { continuation.resume() }
        }
    }

    func perform(isolation: isolated (any Actor)?, _ request: RESTRequest, timeout: Duration) async -> HTTPResult {
        let path = request.path
        let hold = state.withLock { state -> String? in
            state.requests.append("\(request.method) \(path)")
            guard let index = state.holds.firstIndex(where: { path.hasSuffix($0) }) else { return nil }
            return state.holds.remove(at: index)
        }
        if let hold {
            await withCheckedContinuation(isolation: isolation) { continuation in
                let waiting = state.withLock { state in
                    state.held[hold] = continuation
                    defer { state.arrivals.removeAll { $0.0 == hold } }
                    return state.arrivals.filter { $0.0 == hold }.map(\.1)
                }
                for arrival in waiting { arrival.resume() }
            }
        }
        if let backend { return await backend.perform(isolation: isolation, request, timeout: timeout) }
        let loggedIn = state.withLock { state in
            if path.contains("/profiles/code/") { state.loggedIn = true }
            return state.loggedIn
        }
        let body = Self.answer(request.method, path, loggedIn: loggedIn)
        return .response(status: 200, headers: ResponseHeaders(contentType: "application/json"), body: body.serialized())
    }

    static let profile: JSON = ["notAfter": 4_102_444_800_000, "issuer": "MockMVPD", "type": "regular", "attributes": [:]]

    private static func answer(_ method: String, _ path: String, loggedIn: Bool) -> JSON {
        if path.hasSuffix("/o/client/register") { return ["client_id": "client", "client_secret": "secret"] }
        if path.hasSuffix("/o/client/token") { return ["access_token": "token", "expires_in": 86_400] }
        if path.hasSuffix("/configuration") { return ["requestor": ["mvpds": [["id": "MockMVPD", "displayName": "Mock Cable"]]]] }
        if method == "POST", path.hasSuffix("/sessions") {
            return ["actionName": "authenticate", "code": "CODE1", "url": "/api/v2/authenticate/REF/CODE1"]
        }
        // Every profile of the device (setRequestor's re-sync): none before the first login.
        if path.hasSuffix("/profiles") { return ["profiles": loggedIn ? ["MockMVPD": profile] : [:]] }
        if path.contains("/profiles") { return ["profiles": ["MockMVPD": profile]] }
        return [:]
    }
}
