import Foundation
import JSON
import XCTest

@testable import AccessEnabler

/// The SDK's login sequences (Adobe's "iOS/tvOS API Reference") and handleExternalURL rules, against the emulator.
final class LoginFlowTests: EmulatorTestCase {
    func testColdStartIsNotAuthenticated() async throws {
        let client = try makeClient()
        await ready(client)
        let status = await client.engine.checkAuthentication()
        XCTAssertEqual(status, AuthenticationStatus(status: 0, errorCode: "User Not Authenticated Error"))
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.count, 3)
        XCTAssertEqual(callbacks[safe: 0], .setAuthenticationStatus(0, "User Not Authenticated Error"))
        assertTracking(callbacks[safe: 1], event: 0, head: ["false", nil, nil, nil])
        assertStatus(callbacks[safe: 2], id: "N000", level: "info")
        let selected = client.engine.getSelectedProvider()
        XCTAssertNil(selected)
        XCTAssertEqual(client.delegate.take(), [.selectedProvider(nil)])
    }

    func testFullLoginThroughTheMockMVPDForm() async throws {
        let client = try makeClient()
        await ready(client)
        let flow = Task { await client.engine.getAuthentication(forceAuthn: false, data: nil, filter: nil) }
        let shown = await client.delegate.wait { if case .displayProviderDialog = $0 { true } else { false } }
        XCTAssertTrue(shown)
        XCTAssertEqual(client.delegate.take(), [.displayProviderDialog(Self.allMVPDs)])

        let selection = await client.engine.setSelectedProvider("MockMVPD")
        XCTAssertEqual(selection, .started)
        var callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.count, 2)
        assertTracking(callbacks[safe: 0], event: 2, head: ["MockMVPD"])
        guard case .navigate(let url, let useSVC)? = callbacks[safe: 1] else { return XCTFail("no navigateToUrl: \(callbacks)") }
        XCTAssertFalse(useSVC)
        XCTAssertTrue(
            url.hasPrefix(
                emulator.baseURL.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/")) + "/api/v2/authenticate/REF/"), url)

        let end = try await Browser().open(url, fields: ["username": "demo", "password": "demo"])
        XCTAssertEqual(end, .redirected("adobepass://ios.app"))
        let completed = try await client.engine.handleExternalURL("adobepass://ios.app")
        XCTAssertEqual(completed, AuthenticationStatus(status: 1, errorCode: ""))
        let result = await flow.value
        XCTAssertEqual(result, AuthenticationStatus(status: 1, errorCode: ""))
        callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.count, 2)
        XCTAssertEqual(callbacks[safe: 0], .setAuthenticationStatus(1, ""))
        assertTracking(callbacks[safe: 1], event: 0, head: ["true", "MockMVPD"])
        guard case .sendTrackingData(let data, _)? = callbacks[safe: 1] else { return }
        XCTAssertEqual(data[2]?.count, 32, "GUID is an MD5 hex")
        XCTAssertEqual(data[3], "false")

        let check = await client.engine.checkAuthentication()
        XCTAssertEqual(check, AuthenticationStatus(status: 1, errorCode: ""))
        callbacks = client.delegate.take()
        XCTAssertEqual(callbacks[safe: 0], .setAuthenticationStatus(1, ""))
        assertTracking(callbacks[safe: 1], event: 0, head: ["true", "MockMVPD", data[2], "true"])
        XCTAssertEqual(client.engine.getSelectedProvider()?.ID, "MockMVPD")
    }

    func testCancelAtPickerReportsProviderNotSelected() async throws {
        let client = try makeClient()
        await ready(client)
        let flow = await startLoginAtPicker(client)
        let outcome = await client.engine.setSelectedProvider(nil)
        XCTAssertEqual(outcome, .ended(AuthenticationStatus(status: 0, errorCode: "Provider not Selected Error")))
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.count, 3)
        XCTAssertEqual(callbacks[safe: 0], .setAuthenticationStatus(0, "Provider not Selected Error"))
        assertTracking(callbacks[safe: 1], event: 0, head: ["false", nil, nil, nil])
        assertStatus(callbacks[safe: 2], id: "N005", level: "info")
        let result = await flow.value
        XCTAssertEqual(result, AuthenticationStatus(status: 0, errorCode: "Provider not Selected Error"))
        XCTAssertEqual(client.delegate.take(), [])
    }

    func testHandleExternalURLBeforeTheLoginPageSendsNoCallback() async throws {
        let client = try makeClient()
        await ready(client)
        let flow = await startLoginAtPicker(client)
        let early = try await client.engine.handleExternalURL("adobepass://ios.app")
        XCTAssertEqual(early, AuthenticationStatus(status: 0, errorCode: "User Not Authenticated Error"))
        XCTAssertEqual(client.delegate.take(), [], "the pending getAuthentication's status is still to come")
        _ = await client.engine.setSelectedProvider(nil)
        let result = await flow.value
        XCTAssertEqual(result, AuthenticationStatus(status: 0, errorCode: "Provider not Selected Error"))
        XCTAssertEqual(client.delegate.take().first, .setAuthenticationStatus(0, "Provider not Selected Error"))
    }

    /// The SDK applies `filter` to the platform's picker only: the provider dialog lists every MVPD.
    func testFilterLeavesTheProviderDialogWhole() async throws {
        let client = try makeClient()
        await ready(client)
        let filter = ProviderFilter(tvProviders: ["MockPicker", "TempPass"])
        let flow = Task { await client.engine.getAuthentication(forceAuthn: false, data: nil, filter: filter) }
        let shown = await client.delegate.wait { if case .displayProviderDialog = $0 { true } else { false } }
        XCTAssertTrue(shown)
        XCTAssertEqual(client.delegate.take(), [.displayProviderDialog(["MockMVPD", "TempPass", "MockSSO", "MockPicker"])])
        await client.engine.cancel()
        let result = await flow.value
        XCTAssertEqual(result, AuthenticationStatus(status: 0, errorCode: "Provider not Selected Error"))
    }

    func testHandleExternalURLTwiceCompletesOnce() async throws {
        let client = try makeClient()
        await ready(client)
        try await login(client)
        let again = try await client.engine.handleExternalURL("adobepass://ios.app?again=1")
        XCTAssertEqual(again, AuthenticationStatus(status: 1, errorCode: ""))
        XCTAssertEqual(client.delegate.take(), [])
        let deprecated = await client.engine.getAuthenticationToken()
        XCTAssertEqual(deprecated, AuthenticationStatus(status: 1, errorCode: ""))
        XCTAssertEqual(client.delegate.take(), [])
    }

    func testLogoutNavigatesToTheMVPDThenEndsAfterHandleExternalURL() async throws {
        let client = try makeClient()
        await ready(client)
        try await login(client)
        let flow = Task { await client.engine.logout() }
        let navigated = await client.delegate.wait { if case .navigate = $0 { true } else { false } }
        XCTAssertTrue(navigated)
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.count, 1)
        guard case .navigate(let url, false)? = callbacks.first else { return XCTFail("no navigateToUrl") }
        let end = try await Browser().open(url, fields: [:])
        guard case .redirected(let redirect) = end else { return XCTFail("logout page did not redirect: \(end)") }
        let completed = try await client.engine.handleExternalURL(redirect)
        XCTAssertEqual(completed, AuthenticationStatus(status: 0, errorCode: "User Not Authenticated Error"))
        let result = await flow.value
        XCTAssertEqual(result, completed)
        XCTAssertEqual(client.delegate.take(), [.setAuthenticationStatus(0, "User Not Authenticated Error")])
        let second = try await client.engine.handleExternalURL(redirect)
        XCTAssertEqual(second, completed)
        XCTAssertEqual(client.delegate.take(), [])

        let check = await client.engine.checkAuthentication()
        XCTAssertEqual(check.status, 0)
        XCTAssertNil(client.engine.getSelectedProvider())
        // The profile is gone at the backend too: a fresh store on the same device id sees no profile.
        let authz = await client.engine.checkAuthorization("ch1", data: nil)
        XCTAssertEqual(authz, .failed(resource: "ch1", errorCode: "User Not Authenticated Error", errorDescription: ""))
    }

    func testLogoutEndsAfterTheTimeoutWhenTheHostNeverOpensThePage() async throws {
        let client = try makeClient(logoutTimeout: .milliseconds(500))
        await ready(client)
        try await login(client)
        let result = await client.engine.logout()
        XCTAssertEqual(result, AuthenticationStatus(status: 0, errorCode: "User Not Authenticated Error"))
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.count, 2)
        guard case .navigate? = callbacks.first else { return XCTFail("no navigateToUrl") }
        XCTAssertEqual(callbacks.last, .setAuthenticationStatus(0, "User Not Authenticated Error"))
    }

    func testLogoutWithoutWebViewSendsNoNavigation() async throws {
        let directory = temporaryDirectory()
        let web = try makeClient(directory: directory)
        await ready(web)
        try await login(web)
        let tv = try makeClient(webView: false, directory: directory)
        await ready(tv)
        let check = await tv.engine.checkAuthentication()
        XCTAssertEqual(check.status, 1, "instances sharing a store share the login")
        _ = tv.delegate.take()
        let result = await tv.engine.logout()
        XCTAssertEqual(result, AuthenticationStatus(status: 0, errorCode: "User Not Authenticated Error"))
        XCTAssertEqual(tv.delegate.take(), [.setAuthenticationStatus(0, "User Not Authenticated Error")])
    }

    func testCallsQueuedBeforeSetRequestorRunInOrderAfterIt() async throws {
        let http = ScriptedHTTP(backend: HTTPTransport.shared)
        let client = try makeClient(httpClient: http)
        http.hold(next: "/configuration")
        let requestor = Task { await client.engine.setRequestor("REF", serviceProviders: nil) }
        await http.arrived("/configuration")
        let check = Task { await client.engine.checkAuthentication() }
        await client.engine.heldCalls(1)
        let metadata = Task { await client.engine.getMetadata(.authenticationExpiry, arguments: ["opCode": 0]) }
        await client.engine.heldCalls(2)
        let preauth = Task { await client.engine.checkPreauthorizedResources(["ch1"], cache: true).resources }
        await client.engine.heldCalls(3)
        let selectedWhilePending = client.engine.getSelectedProvider()
        XCTAssertNil(selectedWhilePending)
        XCTAssertEqual(client.delegate.take(), [.selectedProvider(nil)], "getSelectedProvider is never queued")
        http.release("/configuration")
        let status = await requestor.value
        XCTAssertEqual(status.status, 1)
        _ = await (check.value, metadata.value, preauth.value)
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.first, .setRequestorComplete(1))
        XCTAssertEqual(callbacks[safe: 1], .setAuthenticationStatus(0, "User Not Authenticated Error"))
        XCTAssertEqual(callbacks.suffix(2), [.setMetadataStatus(.null, false, 0, ["opCode": 0]), .preauthorizedResources([])])
    }

    func testZeroServiceProvidersAnsweringFailsTheQueuedCalls() async throws {
        try await emulator.fault(method: "GET", path: "/api/v2/REF/configuration", kind: "status", value: 500, count: 5)
        let http = ScriptedHTTP(backend: HTTPTransport.shared)
        let client = try makeClient(httpClient: http)
        http.hold(next: "/configuration")
        let requestor = Task { await client.engine.setRequestor("REF", serviceProviders: nil) }
        await http.arrived("/configuration")
        let queued = Task { await client.engine.checkAuthentication() }
        await client.engine.heldCalls(1)
        http.release("/configuration")
        let check = await queued.value
        // The held call carries the reasons of the setRequestor it waited for.
        let cfg500 = AdvancedStatus(id: "CFG500", level: "error", message: "Injected fault: HTTP 500.")
        XCTAssertEqual(check, AuthenticationStatus(status: 0, errorCode: "Generic Authentication Error", statuses: [cfg500]))
        let status = await requestor.value
        XCTAssertEqual(status, RequestorStatus(status: 0, statuses: [cfg500]))
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.first, .setRequestorComplete(0))
        assertStatus(callbacks[safe: 1], id: "CFG500", level: "error")
        XCTAssertEqual(callbacks.last, .setAuthenticationStatus(0, "Generic Authentication Error"))
    }
}
