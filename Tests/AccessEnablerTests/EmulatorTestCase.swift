import Foundation
import JSON
import XCTest

@testable import AccessEnabler

/// Base of the tests against a real `pass-emulator` over HTTP: one emulator process per test.
class EmulatorTestCase: XCTestCase {
    var emulator: EmulatorProcess!
    /// Any well-formed three-part JWT is accepted by the emulator (Sources/PassEmulator/README.md).
    static let softwareStatement = "eyJhbGciOiJSUzI1NiJ9.eyJzb2Z0d2FyZV9pZCI6InBhc3NicmlkZ2UtdGVzdHMifQ.c2lnbmF0dXJl"
    static let allMVPDs = ["MockMVPD", "TempPass", "MockSSO", "MockPicker"]

    override func setUp() async throws {
        emulator = try EmulatorProcess(arguments: emulatorArguments)
    }

    override func tearDown() async throws {
        emulator?.stop()
        emulator = nil
        try? FileManager.default.removeItem(at: testRoot)
    }

    /// Extra command-line arguments for the emulator (e.g. `--config`).
    var emulatorArguments: [String] { [] }

    struct Client {
        let engine: Engine
        let delegate: RecordingDelegate
        let store: TokenStore
        let directory: URL
    }

    func makeClient(
        webView: Bool = true, directory: URL? = nil, logoutTimeout: Duration = .seconds(10), requestTimeout: Duration = .seconds(5),
        serviceProviders: [URL]? = nil, backend: URL? = nil, httpClient: (any HTTPClient)? = nil, activationURL: String? = nil,
        redirectURL: String = "adobepass://ios.app", singleSignOn: SingleSignOnTokens = SingleSignOnTokens()
    ) throws -> Client {
        let directory = directory ?? temporaryDirectory()
        let store = try TokenStore(directory: directory)
        let delegate = RecordingDelegate()
        var configuration = AccessEnablerConfiguration(
            backendURL: BackendURL(backend ?? emulator.baseURL), softwareStatement: Self.softwareStatement, redirectURL: redirectURL,
            webView: webView, activationURL: activationURL, requestTimeout: requestTimeout, logoutTimeout: logoutTimeout,
            pollInterval: .milliseconds(300), maxThrottleRetries: 2)
        if let httpClient { configuration.httpClient = httpClient }
        configuration.singleSignOn = singleSignOn
        return Client(
            engine: Engine(configuration: configuration, store: store, delegate: delegate), delegate: delegate, store: store,
            directory: directory)
    }

    /// setRequestor("REF") that must succeed; returns nothing but clears the recorded callbacks.
    func ready(_ client: Client, file: StaticString = #filePath, line: UInt = #line) async {
        let status = await client.engine.setRequestor("REF", serviceProviders: nil)
        XCTAssertEqual(status.status, 1, file: file, line: line)
        XCTAssertEqual(client.delegate.take(), [.setRequestorComplete(1)], file: file, line: line)
    }

    /// Starts getAuthentication, waits for displayProviderDialog and clears the recorded callbacks; the task ends
    /// with the login's outcome.
    func startLoginAtPicker(
        _ client: Client, file: StaticString = #filePath, line: UInt = #line
    ) async -> Task<AuthenticationStatus, Never> {
        let flow = Task { await client.engine.getAuthentication(forceAuthn: false, data: nil, filter: nil) }
        let shown = await client.delegate.wait { if case .displayProviderDialog = $0 { true } else { false } }
        XCTAssertTrue(shown, "no displayProviderDialog", file: file, line: line)
        _ = client.delegate.take()
        return flow
    }

    /// The whole web-view login with MockMVPD (demo/demo); leaves the delegate empty.
    func login(_ client: Client, file: StaticString = #filePath, line: UInt = #line) async throws {
        let flow = await startLoginAtPicker(client, file: file, line: line)
        let selection = await client.engine.setSelectedProvider("MockMVPD")
        XCTAssertEqual(selection, .started, file: file, line: line)
        let url = try XCTUnwrap(client.delegate.callbacks.compactMap { if case .navigate(let url, _) = $0 { url } else { nil } }.first)
        let end = try await Browser().open(url, fields: ["username": "demo", "password": "demo"])
        guard case .redirected(let redirect) = end else {
            return XCTFail("login did not reach the redirect URL: \(end)", file: file, line: line)
        }
        let completed = try await client.engine.handleExternalURL(redirect)
        XCTAssertEqual(completed, AuthenticationStatus(status: 1, errorCode: ""), file: file, line: line)
        let result = await flow.value
        XCTAssertEqual(result, AuthenticationStatus(status: 1, errorCode: ""), file: file, line: line)
        _ = client.delegate.take()
    }

    /// The media-token check with the emulator's verifier.
    func assertTokenVerifies(_ token: String, resource: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try emulator.verifyToken(token, resource: resource)
        XCTAssertEqual(result.status, 0, "verify-token: \(result.output)", file: file, line: line)
    }
}

/// Checks a tracking callback: event number, leading values, and the array length of its kind
/// (authentication 7, authorization 9, MVPD selection 4; Adobe's "iOS/tvOS API Reference": sendTrackingData).
func assertTracking(
    _ callback: Callback?, event: Int32, head: [String?], file: StaticString = #filePath, line: UInt = #line
) {
    guard case .sendTrackingData(let data, let type)? = callback else {
        return XCTFail("expected sendTrackingData, got \(String(describing: callback))", file: file, line: line)
    }
    XCTAssertEqual(type, event, file: file, line: line)
    XCTAssertEqual(data.count, [7, 9, 4][Int(event)], file: file, line: line)
    XCTAssertEqual(Array(data.prefix(head.count)), head, file: file, line: line)
}

func assertStatus(_ callback: Callback?, id: String, level: String? = nil, file: StaticString = #filePath, line: UInt = #line) {
    guard case .status(let status)? = callback else {
        return XCTFail("expected status \(id), got \(String(describing: callback))", file: file, line: line)
    }
    XCTAssertEqual(status.id, id, file: file, line: line)
    if let level { XCTAssertEqual(status.level, level, file: file, line: line) }
}

extension Array where Element == Callback {
    subscript(safe index: Int) -> Callback? { indices.contains(index) ? self[index] : nil }
}
