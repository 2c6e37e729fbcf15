import AccessEnabler
import Foundation
import JSON
import XCTest

/// Partner single sign-on (Adobe's "Apple SSO Cookbook (REST API V2)", steps 1–4) against the
/// emulator, with a scripted host platform.
final class PartnerSSOTests: EmulatorTestCase {
    struct PartnerClient {
        let engine: Engine
        let delegate: RecordingDelegate
        let platform: ScriptedPlatform
    }

    func makePartnerClient(
        timeout: Duration = .seconds(10), _ configure: (inout ScriptedPlatform.Script) -> Void = { _ in }
    ) throws -> PartnerClient {
        let platform = ScriptedPlatform(emulatorURL: emulator.baseURL, configure)
        let delegate = RecordingDelegate()
        let configuration = AccessEnablerConfiguration(
            backendURL: BackendURL(emulator.baseURL), softwareStatement: Self.softwareStatement, requestTimeout: .seconds(5),
            partnerSSO: platform, partnerSSOTimeout: timeout, pollInterval: .milliseconds(300), maxThrottleRetries: 2)
        let engine = Engine(configuration: configuration, store: try TokenStore(directory: temporaryDirectory()), delegate: delegate)
        return PartnerClient(engine: engine, delegate: delegate, platform: platform)
    }

    /// setRequestor that must succeed; returns its callbacks.
    func setRequestor(_ client: PartnerClient, file: StaticString = #filePath, line: UInt = #line) async -> [Callback] {
        let status = await client.engine.setRequestor("REF", serviceProviders: nil)
        XCTAssertEqual(status.status, 1, file: file, line: line)
        return client.delegate.take()
    }

    func tokenSource(_ client: PartnerClient) async -> JSON {
        let status = await client.engine.getMetadata(.userMetadata(key: "tokenSource"), arguments: .null)
        _ = client.delegate.take()
        return status.metadata
    }

    /// getAuthentication until the regular picker shows; returns the callbacks up to it and the running call.
    func startLogin(
        _ client: PartnerClient,
        until predicate: @escaping (Callback) -> Bool = { if case .displayProviderDialog = $0 { true } else { false } },
        file: StaticString = #filePath, line: UInt = #line
    ) async -> (callbacks: [Callback], flow: Task<AuthenticationStatus, Never>) {
        let flow = Task { await client.engine.getAuthentication(forceAuthn: false, data: nil, filter: nil) }
        let shown = await client.delegate.wait(for: predicate)
        XCTAssertTrue(shown, "\(client.delegate.callbacks)", file: file, line: line)
        return (client.delegate.take(), flow)
    }

    /// Cancels the regular picker and checks the flow ends with N005.
    func cancelPicker(
        _ client: PartnerClient, _ flow: Task<AuthenticationStatus, Never>, file: StaticString = #filePath, line: UInt = #line
    ) async {
        _ = await client.engine.setSelectedProvider(nil)
        let result = await flow.value
        XCTAssertEqual(result, AuthenticationStatus(status: 0, errorCode: "Provider not Selected Error"), file: file, line: line)
        _ = client.delegate.take()
    }

    // MARK: step 2: setRequestor

    func testGrantedAndSignedInLogsInSilentlyDuringSetRequestor() async throws {
        let client = try makePartnerClient()
        let value1 = await setRequestor(client)
        XCTAssertEqual(value1, [.setRequestorComplete(1)])
        XCTAssertEqual(
            client.platform.takeRequests(),
            [
                .access(prompt: false), .metadata(interruptionAllowed: false, withToken: false),
                .metadata(interruptionAllowed: false, withToken: true),
            ])
        let saml = try XCTUnwrap(client.platform.lastMetadataRequest)
        XCTAssertEqual(saml.attributeNames, ["uid"])
        XCTAssertEqual(saml.supportedProviderIds, ["MockSSO", "MockPicker"])
        XCTAssertEqual(saml.featuredProviderIds, ["MockSSO", "MockPicker"])

        let check = await client.engine.checkAuthentication()
        XCTAssertEqual(check, AuthenticationStatus(status: 1, errorCode: ""))
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks[safe: 0], .setAuthenticationStatus(1, ""))
        assertTracking(callbacks[safe: 1], event: 0, head: ["true", "MockSSO"])
        XCTAssertEqual(callbacks.count, 2)
        let value2 = await tokenSource(client)
        XCTAssertEqual(value2, "Apple")

        // An explicit getAuthentication always answers with setAuthenticationStatus (cookbook step 4).
        let again = await client.engine.getAuthentication(forceAuthn: false, data: nil, filter: nil)
        XCTAssertEqual(again, AuthenticationStatus(status: 1, errorCode: ""))
        XCTAssertEqual(client.delegate.take().first, .setAuthenticationStatus(1, ""))

        // Decisions on an appleSSO profile need the partner status header: the emulator refuses them without it.
        let outcome = await client.engine.checkAuthorization("ch1", data: nil)
        guard case .token(let token, "ch1", _) = outcome else { return XCTFail("no token: \(outcome)") }
        try assertTokenVerifies(token, resource: "ch1")

        // Step 3: the permission withdrawn on the platform → 0 with VSA403.
        client.platform.change { $0.access = .success(.denied) }
        let withdrawn = await client.engine.checkAuthentication()
        XCTAssertEqual(withdrawn, AuthenticationStatus(status: 0, errorCode: "User Not Authenticated Error"))
        assertStatus(client.delegate.take().last, id: "VSA403")
    }

    func testForegroundSetRequestorKeepsThePartnerProfileWithTheStatusHeader() async throws {
        let client = try makePartnerClient()
        _ = await setRequestor(client)
        _ = client.platform.takeRequests()
        // The stored appleSSO profile is checked with `profiles/MockSSO` + the status header, so no new exchange.
        let callbacks = await setRequestor(client)
        XCTAssertEqual(callbacks, [.setRequestorComplete(1)])
        XCTAssertEqual(client.platform.takeRequests(), [.access(prompt: false), .metadata(interruptionAllowed: false, withToken: false)])
        let check = await client.engine.checkAuthentication()
        XCTAssertEqual(check, AuthenticationStatus(status: 1, errorCode: ""))
        let preauthorized = await client.engine.checkPreauthorizedResources(["ch1", "ch2"], cache: false).resources
        XCTAssertEqual(preauthorized, ["ch1"])
    }

    func testDeniedReportsVSA403AndShowsTheRegularPicker() async throws {
        let client = try makePartnerClient { $0.access = .success(.denied) }
        let callbacks = await setRequestor(client)
        XCTAssertEqual(callbacks.first, .setRequestorComplete(1))
        assertStatus(callbacks[safe: 1], id: "VSA403")
        XCTAssertEqual(client.platform.takeRequests(), [.access(prompt: false)])

        let check = await client.engine.checkAuthentication()
        XCTAssertEqual(check, AuthenticationStatus(status: 0, errorCode: "User Not Authenticated Error"))
        assertStatus(client.delegate.take().last, id: "VSA403")

        let (shown, flow) = await startLogin(client)
        XCTAssertEqual(shown.count, 2)
        assertStatus(shown[safe: 0], id: "VSA403")
        XCTAssertEqual(shown[safe: 1], .displayProviderDialog(Self.allMVPDs))
        XCTAssertEqual(client.platform.takeRequests().last, .access(prompt: true))
        await cancelPicker(client, flow)
    }

    func testNotDeterminedReportsVSA404() async throws {
        let client = try makePartnerClient { $0.access = .success(.notDetermined) }
        let callbacks = await setRequestor(client)
        XCTAssertEqual(callbacks.first, .setRequestorComplete(1))
        assertStatus(callbacks[safe: 1], id: "VSA404", level: "info")
        let (shown, flow) = await startLogin(client)
        assertStatus(shown.first, id: "VSA404")
        XCTAssertEqual(shown.last, .displayProviderDialog(Self.allMVPDs))
        await cancelPicker(client, flow)
    }

    func testHostErrorReportsAPPLErrorAndFallsBack() async throws {
        let client = try makePartnerClient { $0.access = .failure(PartnerSSOError(.other, message: "framework crashed")) }
        let callbacks = await setRequestor(client)
        XCTAssertEqual(callbacks.first, .setRequestorComplete(1))
        assertStatus(callbacks[safe: 1], id: "APPL_ERROR", level: "error")
        guard case .status(let status)? = callbacks[safe: 1] else { return }
        XCTAssertEqual(status.details, "framework crashed")
        let (shown, flow) = await startLogin(client)
        assertStatus(shown.first, id: "APPL_ERROR")
        XCTAssertEqual(shown.last, .displayProviderDialog(Self.allMVPDs))
        await cancelPicker(client, flow)
    }

    /// Cookbook step 2: the silent exchange's own host call (the SAML request) failing is an error between the
    /// device and the platform: APPL_ERROR after setRequestorComplete(1), and no profile.
    func testAFailedSilentExchangeReportsAPPLErrorAfterSetRequestorComplete() async throws {
        let client = try makePartnerClient { $0.samlError = PartnerSSOError(.serviceTemporarilyUnavailable, message: "no answer") }
        let callbacks = await setRequestor(client)
        XCTAssertEqual(callbacks.count, 2)
        XCTAssertEqual(callbacks.first, .setRequestorComplete(1))
        assertStatus(callbacks[safe: 1], id: "APPL_ERROR", level: "error")
        guard case .status(let status)? = callbacks[safe: 1] else { return }
        XCTAssertEqual(status.details, "no answer")
        XCTAssertEqual(client.platform.takeRequests().last, .metadata(interruptionAllowed: false, withToken: true))
        let check = await client.engine.checkAuthentication()
        XCTAssertEqual(check.status, 0)
    }

    /// Cookbook step 3: a stored partner profile reads 0 once single sign-on is disabled for its MVPD, whether
    /// another MVPD of the requestor still has platform services (the platform is asked, and the status is N000)
    /// or none has (the platform is not asked); it stands again once SSO is back.
    func testAPartnerProfileReadsZeroOnceSSOIsDisabledForItsMVPD() async throws {
        let client = try makePartnerClient()
        let first = await setRequestor(client)
        XCTAssertEqual(first, [.setRequestorComplete(1)])
        let signedIn = await client.engine.checkAuthentication()
        XCTAssertEqual(signedIn, AuthenticationStatus(status: 1, errorCode: ""))
        _ = client.delegate.take()

        try await emulator.platformServices("REF", mvpd: "MockSSO", enabled: false)
        _ = await setRequestor(client)
        let disabled = await client.engine.checkAuthentication()
        XCTAssertEqual(disabled, AuthenticationStatus(status: 0, errorCode: "User Not Authenticated Error"))
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.first, .setAuthenticationStatus(0, "User Not Authenticated Error"))
        assertStatus(callbacks.last, id: "N000")

        try await emulator.platformServices("REF", mvpd: "MockPicker", enabled: false)
        _ = await setRequestor(client)
        _ = client.platform.takeRequests()
        let noneBoarded = await client.engine.checkAuthentication()
        XCTAssertEqual(noneBoarded, AuthenticationStatus(status: 0, errorCode: "User Not Authenticated Error"))
        XCTAssertEqual(client.platform.takeRequests(), [])
        _ = client.delegate.take()

        try await emulator.platformServices("REF", mvpd: "MockSSO", enabled: true)
        _ = await setRequestor(client)
        let back = await client.engine.checkAuthentication()
        XCTAssertEqual(back, AuthenticationStatus(status: 1, errorCode: ""))
    }

    func testMetadataFailureReportsVSA503AndFallsBack() async throws {
        let client = try makePartnerClient {
            $0.signedIn = nil
            $0.picker = .failure(PartnerSSOError(.serviceTemporarilyUnavailable, message: "platform busy"))
        }
        let value3 = await setRequestor(client)
        XCTAssertEqual(value3, [.setRequestorComplete(1)], "nobody signed in at the platform: no status")
        let (shown, flow) = await startLogin(client)
        XCTAssertEqual(shown.count, 4)
        XCTAssertEqual(Array(shown.prefix(2)), [.presentTvProviderDialog, .dismissTvProviderDialog])
        assertStatus(shown[safe: 2], id: "VSA503")
        XCTAssertEqual(shown[safe: 3], .displayProviderDialog(Self.allMVPDs))
        await cancelPicker(client, flow)
    }

    func testPlatformSilenceCountsAsVSA503() async throws {
        let client = try makePartnerClient(timeout: .milliseconds(300)) { $0.signedIn = nil }
        _ = await setRequestor(client)
        client.platform.change { $0.delay = .seconds(3) }
        let (shown, flow) = await startLogin(client)
        assertStatus(shown.first, id: "VSA503")
        XCTAssertEqual(shown.last, .displayProviderDialog(Self.allMVPDs))
        await cancelPicker(client, flow)
    }

    // MARK: step 4: the platform picker

    func testOtherProviderReportsN003() async throws {
        let client = try makePartnerClient {
            $0.signedIn = nil
            $0.picker = .failure(PartnerSSOError(.unsupportedProvider))
        }
        _ = await setRequestor(client)
        let (shown, flow) = await startLogin(client)
        XCTAssertEqual(Array(shown.prefix(2)), [.presentTvProviderDialog, .dismissTvProviderDialog])
        assertStatus(shown[safe: 2], id: "N003")
        XCTAssertEqual(shown[safe: 3], .displayProviderDialog(Self.allMVPDs))
        await cancelPicker(client, flow)
    }

    func testUnsupportedProviderReportsN004() async throws {
        let answers: [Result<String, PartnerSSOError>] = [
            .success("NoSuchTV"), .failure(PartnerSSOError(.unsupportedProvider, unsupportedProviderIdentifier: "NoSuchTV")),
        ]
        for answer in answers {
            let client = try makePartnerClient {
                $0.signedIn = nil
                $0.picker = answer
            }
            _ = await setRequestor(client)
            let (shown, flow) = await startLogin(client)
            XCTAssertEqual(shown.count, 4, "\(shown)")
            assertStatus(shown[safe: 2], id: "N004")
            XCTAssertEqual(shown[safe: 3], .displayProviderDialog(Self.allMVPDs))
            await cancelPicker(client, flow)
        }
    }

    func testCancelledPlatformPickerReportsN005() async throws {
        let client = try makePartnerClient {
            $0.signedIn = nil
            $0.picker = .failure(PartnerSSOError(.userCancelled))
        }
        _ = await setRequestor(client)
        let (shown, flow) = await startLogin(client)
        XCTAssertEqual(Array(shown.prefix(2)), [.presentTvProviderDialog, .dismissTvProviderDialog])
        assertStatus(shown[safe: 2], id: "N005", level: "info")
        XCTAssertEqual(shown[safe: 3], .displayProviderDialog(Self.allMVPDs))
        await cancelPicker(client, flow)
    }

    func testPickerBoardedProviderIsSelectedSilentlyWithNoCode() async throws {
        let client = try makePartnerClient {
            $0.signedIn = nil
            $0.picker = .failure(PartnerSSOError(.unsupportedProvider, unsupportedProviderIdentifier: "MockPicker"))
        }
        _ = await setRequestor(client)
        let (shown, flow) = await startLogin(client) { if case .navigate = $0 { true } else { false } }
        XCTAssertEqual(shown.count, 4, "\(shown)")
        XCTAssertEqual(Array(shown.prefix(2)), [.presentTvProviderDialog, .dismissTvProviderDialog])
        assertTracking(shown[safe: 2], event: 2, head: ["MockPicker"])
        guard case .navigate(let url, _)? = shown[safe: 3] else { return XCTFail("no navigateToUrl: \(shown)") }
        XCTAssertEqual(client.engine.getSelectedProvider()?.ID, "MockPicker")
        _ = client.delegate.take()

        let end = try await Browser().open(url, fields: ["username": "demo", "password": "demo"])
        XCTAssertEqual(end, .redirected("adobepass://ios.app"))
        _ = try await client.engine.handleExternalURL("adobepass://ios.app")
        let result = await flow.value
        XCTAssertEqual(result, AuthenticationStatus(status: 1, errorCode: ""))
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.first, .setAuthenticationStatus(1, ""))
        XCTAssertFalse(callbacks.contains { if case .status = $0 { true } else { false } }, "\(callbacks)")
        let value4 = await tokenSource(client)
        XCTAssertEqual(value4, "MockPicker")
    }

    func testPlatformPickerLoginExchangesTheAccount() async throws {
        let client = try makePartnerClient {
            $0.signedIn = nil
            $0.picker = .success("MockSSO")
        }
        let value5 = await setRequestor(client)
        XCTAssertEqual(value5, [.setRequestorComplete(1)])
        _ = client.platform.takeRequests()
        let result = await client.engine.getAuthentication(forceAuthn: false, data: nil, filter: nil)
        XCTAssertEqual(result, AuthenticationStatus(status: 1, errorCode: ""))
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.count, 4, "\(callbacks)")
        XCTAssertEqual(Array(callbacks.prefix(3)), [.presentTvProviderDialog, .dismissTvProviderDialog, .setAuthenticationStatus(1, "")])
        assertTracking(callbacks[safe: 3], event: 0, head: ["true", "MockSSO"])
        XCTAssertEqual(
            client.platform.takeRequests(),
            [
                .access(prompt: true), .metadata(interruptionAllowed: true, withToken: false),
                .metadata(interruptionAllowed: true, withToken: true),
            ])
        let value6 = await tokenSource(client)
        XCTAssertEqual(value6, "Apple")
        // Already authenticated: an explicit getAuthentication still answers with setAuthenticationStatus.
        let again = await client.engine.getAuthentication(forceAuthn: false, data: nil, filter: nil)
        XCTAssertEqual(again, AuthenticationStatus(status: 1, errorCode: ""))
        XCTAssertEqual(client.delegate.take().first, .setAuthenticationStatus(1, ""))
    }

    func testExpiredProviderInfoIsNotExchangedAndFallsBackToTheLoginPage() async throws {
        let client = try makePartnerClient { $0.expires = Int64(Date().timeIntervalSince1970 * 1000) - 60_000 }
        let value7 = await setRequestor(client)
        XCTAssertEqual(value7, [.setRequestorComplete(1)])
        XCTAssertEqual(client.platform.takeRequests(), [.access(prompt: false), .metadata(interruptionAllowed: false, withToken: false)])
        let check = await client.engine.checkAuthentication()
        XCTAssertEqual(check, AuthenticationStatus(status: 0, errorCode: "User Not Authenticated Error"))
        assertStatus(client.delegate.take().last, id: "N000")

        // The backend answers pfs_fallback for the expired status: the regular login page of that MVPD, no code.
        let (shown, flow) = await startLogin(client) { if case .navigate = $0 { true } else { false } }
        XCTAssertEqual(Array(shown.prefix(2)), [.presentTvProviderDialog, .dismissTvProviderDialog])
        assertTracking(shown[safe: 2], event: 2, head: ["MockSSO"])
        guard case .navigate(let url, _)? = shown[safe: 3] else { return XCTFail("no navigateToUrl: \(shown)") }
        XCTAssertTrue(url.contains("/api/v2/authenticate/REF/"), url)
        await client.engine.cancel()
        _ = await flow.value
    }

    // MARK: logout

    func testLogoutReportsVSA203AndTheNextSetRequestorExchangesAgain() async throws {
        let client = try makePartnerClient()
        let value8 = await setRequestor(client)
        XCTAssertEqual(value8, [.setRequestorComplete(1)])
        let loggedOut = await client.engine.logout()
        XCTAssertEqual(loggedOut, AuthenticationStatus(status: 0, errorCode: "User Not Authenticated Error"))
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.first, .setAuthenticationStatus(0, "User Not Authenticated Error"))
        assertStatus(callbacks[safe: 1], id: "VSA203", level: "info")
        XCTAssertEqual(callbacks.count, 2)

        let check = await client.engine.checkAuthentication()
        XCTAssertEqual(check.status, 0)
        _ = client.delegate.take()
        _ = client.platform.takeRequests()

        // Still signed in on the platform: the next setRequestor (app back in the foreground) logs in silently.
        let value9 = await setRequestor(client)
        XCTAssertEqual(value9, [.setRequestorComplete(1)])
        XCTAssertEqual(client.platform.takeRequests().last, .metadata(interruptionAllowed: false, withToken: true))
        let after = await client.engine.checkAuthentication()
        XCTAssertEqual(after, AuthenticationStatus(status: 1, errorCode: ""))
        let value10 = await tokenSource(client)
        XCTAssertEqual(value10, "Apple")
    }
}
