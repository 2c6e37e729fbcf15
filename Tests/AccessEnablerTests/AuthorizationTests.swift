import AccessEnabler
import Foundation
import JSON
import XCTest

/// The SDK's authorization sequences (Adobe's "iOS/tvOS API Reference"), preauthorization and metadata, against the emulator.
final class AuthorizationTests: EmulatorTestCase {
    func testAuthorizedPlayDeliversAVerifiableMediaToken() async throws {
        let client = try makeClient()
        await ready(client)
        try await login(client)
        let outcome = await client.engine.checkAuthorization("ch1", data: nil)
        guard case .token(let token, let resource, _) = outcome else { return XCTFail("not authorized: \(outcome)") }
        XCTAssertEqual(resource, "ch1")
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.count, 2)
        XCTAssertEqual(callbacks[safe: 0], .setToken(token, "ch1"))
        assertTracking(callbacks[safe: 1], event: 1, head: ["true", "MockMVPD"])
        guard case .sendTrackingData(let data, _)? = callbacks[safe: 1] else { return }
        XCTAssertEqual(data[3], "false")
        XCTAssertNil(data[4])
        XCTAssertNil(data[5])
        try assertTokenVerifies(token, resource: "ch1")
        XCTAssertNotEqual(try emulator.verifyToken(token, resource: "ch2").status, 0, "the token is for ch1 only")

        let expiry = await client.engine.getMetadata(.authorizationExpiry(resource: "ch1"), arguments: ["opCode": 1, "resource": "ch1"])
        // The SDK's date string, and the same instant in epoch ms beside it.
        let expires = try XCTUnwrap(expiry.expires)
        XCTAssertEqual(expiry.metadata, .string(SDKDate.format(millis: expires)))
        XCTAssertEqual(expiry.key, 1)
        XCTAssertEqual(expiry.arguments, ["opCode": 1, "resource": "ch1"])
        XCTAssertEqual(client.delegate.take(), [.setMetadataStatus(expiry.metadata, false, 1, ["opCode": 1, "resource": "ch1"])])
    }

    func testDenialCarriesTheMVPDMessageIntact() async throws {
        let client = try makeClient()
        await ready(client)
        try await login(client)
        let outcome = await client.engine.checkAuthorization("ch2", data: nil)
        let details = "Your subscription does not include \"Channel 2\"."
        let denied = AdvancedStatus(
            id: "Z100", level: "error",
            message: "The MVPD has returned a \"Deny\" decision when requesting authorization for the specified resource.",
            details: details, resource: "ch2")
        XCTAssertEqual(
            outcome, .failed(resource: "ch2", errorCode: "User not Authorized Error", errorDescription: details, statuses: [denied]))
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.count, 3)
        XCTAssertEqual(callbacks[safe: 0], .tokenRequestFailed("ch2", "User not Authorized Error", details))
        assertTracking(callbacks[safe: 1], event: 1, head: ["false", "MockMVPD"])
        guard case .sendTrackingData(let data, _)? = callbacks[safe: 1] else { return }
        XCTAssertEqual(data[4], "User not Authorized Error")
        XCTAssertEqual(data[5], details)
        assertStatus(callbacks[safe: 2], id: "Z100", level: "error")
        guard case .status(let status)? = callbacks[safe: 2] else { return }
        XCTAssertEqual(status.details, details)
        XCTAssertEqual(status.resource, "ch2")
    }

    func testCheckAuthorizationWhileLoggedOutFailsWithoutLogin() async throws {
        let client = try makeClient()
        await ready(client)
        let outcome = await client.engine.checkAuthorization("ch1", data: nil)
        XCTAssertEqual(outcome, .failed(resource: "ch1", errorCode: "User Not Authenticated Error", errorDescription: ""))
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.count, 2)
        XCTAssertEqual(callbacks[safe: 0], .tokenRequestFailed("ch1", "User Not Authenticated Error", ""))
        assertTracking(callbacks[safe: 1], event: 1, head: ["false", nil, nil, "false", "User Not Authenticated Error", ""])
    }

    func testGetAuthorizationWhileLoggedOutContinuesAfterLogin() async throws {
        let client = try makeClient()
        await ready(client)
        let data: JSONObject = ["zip": "10001", "note": "café"]
        let play = Task { await client.engine.getAuthorization("ch1", data: data) }
        let shown = await client.delegate.wait { if case .displayProviderDialog = $0 { true } else { false } }
        XCTAssertTrue(shown)
        XCTAssertEqual(client.delegate.take(), [.displayProviderDialog(Self.allMVPDs)])
        let selection = await client.engine.setSelectedProvider("MockMVPD")
        XCTAssertEqual(selection, .started)
        let url = try XCTUnwrap(client.delegate.take().compactMap { if case .navigate(let url, _) = $0 { url } else { nil } }.first)
        let end = try await Browser().open(url, fields: ["username": "demo", "password": "demo"])
        guard case .redirected(let redirect) = end else { return XCTFail("no redirect: \(end)") }
        let completed = try await client.engine.handleExternalURL(redirect)
        XCTAssertEqual(completed.status, 1)
        let outcome = await play.value
        guard case .token(let token, "ch1", _) = outcome else { return XCTFail("not continued: \(outcome)") }
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.count, 4)
        XCTAssertEqual(callbacks[safe: 0], .setAuthenticationStatus(1, ""))
        assertTracking(callbacks[safe: 1], event: 0, head: ["true", "MockMVPD"])
        XCTAssertEqual(callbacks[safe: 2], .setToken(token, "ch1"))
        assertTracking(callbacks[safe: 3], event: 1, head: ["true", "MockMVPD"])
        try assertTokenVerifies(token, resource: "ch1")
    }

    /// A ready client whose getAuthorization("ch1") waits at the provider dialog (its callbacks so far taken).
    private func getAuthorizationAtTheDialog() async throws -> (Client, Task<AuthorizationOutcome, Never>) {
        let client = try makeClient()
        await ready(client)
        let play = Task { await client.engine.getAuthorization("ch1", data: nil) }
        let shown = await client.delegate.wait { if case .displayProviderDialog = $0 { true } else { false } }
        XCTAssertTrue(shown)
        _ = client.delegate.take()
        return (client, play)
    }

    /// The reference: any failure of getAuthorization ends with tokenRequestFailed, also the user's cancel of the
    /// login it started (after that login's setAuthenticationStatus(0, "Provider not Selected Error")).
    func testGetAuthorizationWhoseLoginIsCancelledEndsWithTokenRequestFailed() async throws {
        let (client, play) = try await getAuthorizationAtTheDialog()
        _ = await client.engine.setSelectedProvider(nil)
        let outcome = await play.value
        XCTAssertEqual(outcome, .failed(resource: "ch1", errorCode: "Provider not Selected Error", errorDescription: ""))
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks[safe: 0], .setAuthenticationStatus(0, "Provider not Selected Error"))
        let failed = callbacks.firstIndex {
            if case .tokenRequestFailed("ch1", "Provider not Selected Error", "") = $0 { true } else { false }
        }
        XCTAssertNotNil(failed, "\(callbacks)")
    }

    /// Cancelling the task of a getAuthorization waiting at the provider dialog (the bridge's `$/cancelRequest`)
    /// is the user's cancel: the dialog's login ends with N005, then tokenRequestFailed; a later login starts afresh.
    func testCancellingTheTaskOfAGetAuthorizationAtTheDialogCancelsItsLogin() async throws {
        let (client, play) = try await getAuthorizationAtTheDialog()
        play.cancel()
        let outcome = await play.value
        XCTAssertEqual(outcome, .failed(resource: "ch1", errorCode: "Provider not Selected Error", errorDescription: ""))
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks[safe: 0], .setAuthenticationStatus(0, "Provider not Selected Error"))
        XCTAssertTrue(callbacks.contains { if case .status(let s) = $0 { s.id == "N005" } else { false } }, "\(callbacks)")
        XCTAssertTrue(
            callbacks.contains { if case .tokenRequestFailed("ch1", "Provider not Selected Error", "") = $0 { true } else { false } })
        // The next login shows its own dialog: the cancelled one is over.
        let again = Task { await client.engine.getAuthentication(forceAuthn: false, data: nil, filter: nil) }
        let shownAgain = await client.delegate.wait { if case .displayProviderDialog = $0 { true } else { false } }
        XCTAssertTrue(shownAgain)
        _ = await client.engine.setSelectedProvider(nil)
        _ = await again.value
    }

    /// A task cancelled before its call asked for a login ends alone with the cancel outcome: no dialog.
    func testACallCancelledBeforeItsLoginShowsNoDialog() async throws {
        let client = try makeClient()
        await ready(client)
        _ = client.delegate.take()
        let play = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await client.engine.getAuthentication(forceAuthn: false, data: nil, filter: nil)
        }
        let outcome = await play.value
        XCTAssertEqual(outcome.errorCode, "Provider not Selected Error")
        let callbacks = client.delegate.take()
        XCTAssertFalse(callbacks.contains { if case .displayProviderDialog = $0 { true } else { false } }, "\(callbacks)")
        XCTAssertEqual(callbacks[safe: 0], .setAuthenticationStatus(0, "Provider not Selected Error"))
    }

    func testMRSSResourcesReachSetTokenByteExact() async throws {
        let client = try makeClient()
        await ready(client)
        try await login(client)
        let resources = [
            #"<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>ch1</title><item><title>Tom &amp; Jerry's "Best" — Ça va? 日本</title><guid>a&amp;b</guid><media:rating scheme="urn:v-chip">tv-14</media:rating></item></channel></rss>"#,
            #"<rss version="2.0"><channel><title>ch1</title><item><title>1 &lt; 2 &amp;&amp; "q" 'x'</title></item></channel></rss>"#,
        ]
        for resource in resources {
            let outcome = await client.engine.checkAuthorization(resource, data: nil)
            guard case .token(let token, let echoed, _) = outcome else { return XCTFail("not authorized: \(outcome)") }
            XCTAssertEqual(Array(echoed.utf8), Array(resource.utf8))
            XCTAssertEqual(client.delegate.take().first, .setToken(token, resource))
            try assertTokenVerifies(token, resource: resource)
        }
    }

    func testPreauthorizationReportsPermittedResourcesAndUsesTheCache() async throws {
        let client = try makeClient()
        await ready(client)
        let loggedOut = await client.engine.checkPreauthorizedResources(["ch1", "ch2"], cache: true).resources
        XCTAssertEqual(loggedOut, [])
        XCTAssertEqual(client.delegate.take(), [.preauthorizedResources([])])
        try await login(client)
        let first = await client.engine.checkPreauthorizedResources(["ch2", "ch1"], cache: true).resources
        XCTAssertEqual(first, ["ch1"])
        XCTAssertEqual(client.delegate.take(), [.preauthorizedResources(["ch1"])])
        // Permits are cached in memory: answered while the backend fails.
        try await emulator.fault(method: "POST", path: "/api/v2/REF/decisions/preauthorize/MockMVPD", kind: "status", value: 500, count: 5)
        let cached = await client.engine.checkPreauthorizedResources(["ch1", "ch1"], cache: true).resources
        XCTAssertEqual(cached, ["ch1"])
        XCTAssertEqual(client.delegate.take(), [.preauthorizedResources(["ch1"])])
        // A denial is never cached: ch2 is asked for again.
        let denied = await client.engine.checkPreauthorizedResources(["ch1", "ch2"], cache: true).resources
        XCTAssertEqual(denied, [])
        XCTAssertEqual(client.delegate.take().first, .preauthorizedResources([]))
        let uncached = await client.engine.checkPreauthorizedResources(["ch1", "ch2"], cache: false).resources
        XCTAssertEqual(uncached, [])
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.first, .preauthorizedResources([]))
        assertStatus(callbacks[safe: 1], id: "P100", level: "error")
    }

    /// Decisions are never persisted: another instance on the same store (or this one after a restart) asks the
    /// backend again, and nothing of them is in the store file.
    func testPreauthorizationDecisionsAreNeverPersisted() async throws {
        let directory = temporaryDirectory()
        let client = try makeClient(directory: directory)
        await ready(client)
        try await login(client)
        let first = await client.engine.checkPreauthorizedResources(["ch1", "ch2"], cache: true).resources
        XCTAssertEqual(first, ["ch1"])
        try await emulator.fault(method: "POST", path: "/api/v2/REF/decisions/preauthorize/MockMVPD", kind: "status", value: 500, count: 5)
        let other = try makeClient(directory: directory)
        await ready(other)
        _ = other.delegate.take()
        let fresh = await other.engine.checkPreauthorizedResources(["ch1"], cache: true).resources
        XCTAssertEqual(fresh, [], "another instance has no cached permit: it asked the backend, which failed")
        let callbacks = other.delegate.take()
        XCTAssertEqual(callbacks.first, .preauthorizedResources([]))
        assertStatus(callbacks[safe: 1], id: "P100", level: "error")
        let file = try String(decoding: Data(contentsOf: directory.appendingPathComponent("passbridge.sqlite")), as: UTF8.self)
        let wal =
            (try? Data(contentsOf: directory.appendingPathComponent("passbridge.sqlite-wal"))).map { String(decoding: $0, as: UTF8.self) }
            ?? ""
        XCTAssertFalse((file + wal).contains("preauth"), "no preauthorization table or rows")
    }

    func testMetadataAfterLogin() async throws {
        let client = try makeClient()
        await ready(client)
        let none = await client.engine.getMetadata(.authenticationExpiry, arguments: ["opCode": "METADATA_AUTHENTICATION"])
        XCTAssertEqual(none, MetadataStatus(metadata: .null, encrypted: false, key: 0, arguments: ["opCode": "METADATA_AUTHENTICATION"]))
        try await login(client)
        _ = client.delegate.take()
        let expiry = await client.engine.getMetadata(.authenticationExpiry, arguments: ["opCode": 0])
        let notAfter = try XCTUnwrap(expiry.expires)
        let nowMillis = Int64(Date().timeIntervalSince1970 * 1000)
        XCTAssertGreaterThan(notAfter, nowMillis + 23 * 3_600_000, "profile TTL 24 h in epoch ms")
        XCTAssertLessThan(notAfter, nowMillis + 25 * 3_600_000)
        let zip = await client.engine.getMetadata(.userMetadata(key: "zip"), arguments: ["opCode": 3, "userMetaKey": "zip"])
        XCTAssertTrue(zip.encrypted)
        XCTAssertFalse(zip.metadata.isNull)
        XCTAssertEqual(zip.key, 3)
        let household = await client.engine.getMetadata(.userMetadata(key: "householdID"), arguments: ["opCode": 3])
        XCTAssertFalse(household.encrypted)
        XCTAssertFalse(household.metadata.isNull)
        let source = await client.engine.getMetadata(.userMetadata(key: "tokenSource"), arguments: ["opCode": 3])
        XCTAssertEqual(source.metadata, "MockMVPD")
        let unknown = await client.engine.getMetadata(.userMetadata(key: "nothing"), arguments: ["opCode": 3])
        XCTAssertEqual(unknown.metadata, .null)
        let device = await client.engine.getMetadata(.deviceID, arguments: ["opCode": 2])
        XCTAssertNotNil(device.metadata.stringValue)
        XCTAssertEqual(client.delegate.take().count, 6)
    }

    func testUserMetadataWithoutAKeyIsTheWholeObject() async throws {
        let client = try makeClient()
        await ready(client)
        let arguments: JSON = ["opCode": "METADATA_USER_META"]
        let none = await client.engine.getMetadata(.userMetadataObject, arguments: arguments)
        XCTAssertEqual(none, MetadataStatus(metadata: .null, encrypted: false, key: 3, arguments: arguments))
        try await login(client)
        _ = client.delegate.take()
        let expiry = await client.engine.getMetadata(.authenticationExpiry, arguments: ["opCode": 0])
        let object = await client.engine.getMetadata(.userMetadataObject, arguments: arguments)
        // The emulator's profiles live 24 h: `updated` (seconds) is their notBefore, a day before the expiry (ms).
        let notAfter = try XCTUnwrap(expiry.expires)
        XCTAssertEqual(object.metadata["updated"], .integer((notAfter - 86_400_000) / 1000))
        XCTAssertEqual(object.metadata["encrypted"], ["zip"])
        let zip = await client.engine.getMetadata(.userMetadata(key: "zip"), arguments: ["opCode": 3, "userMetaKey": "zip"])
        XCTAssertEqual(
            object.metadata["data"], ["userID": "demo-user-0001", "householdID": "demo-household-0001", "zip": zip.metadata])
        XCTAssertFalse(object.encrypted)
        XCTAssertEqual(object.key, 3)
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks[safe: 1], .setMetadataStatus(object.metadata, false, 3, arguments))
    }
}
