import AccessEnabler
import Foundation
import JSON
import XCTest

/// Tests that need an emulator configuration of their own (`pass-emulator --config FILE`).
final class ConfiguredEmulatorTests: EmulatorTestCase {
    static let denialDetails = #"Your package "Basic" lacks « Sports » — upgrade at https://cable.example/upgrade?plan=a&b=1 (日本語) 'now'"#

    override var emulatorArguments: [String] {
        let logo = "https://entitlement.auth.adobe.com/entitlement/noLogo.png"
        let config: JSON = [
            "serviceProviders": [
                ["id": "EMPTY", "name": "No MVPDs", "domains": [["name": "adobe.com", "mvpdInitiated": false]], "mvpds": []],
                [
                    "id": "REF", "name": "Reference Programmer", "domains": [["name": "adobe.com", "mvpdInitiated": false]],
                    "mvpds": [
                        ["id": "MockMVPD", "displayName": "Mock Cable", "logoUrl": .string(logo)],
                        ["id": "SVCCable", "displayName": "Cable that needs SVC", "requiresSVC": true],
                    ],
                ],
            ],
            "users": [
                [
                    "username": "demo", "password": "demo", "mvpds": ["MockMVPD", "SVCCable"],
                    "attributes": ["userID": ["value": "u-1", "state": "plain"]],
                    "entitlements": ["ch1": ["permit": true], "ch3": ["permit": false, "details": .string(Self.denialDetails)]],
                ]
            ],
        ]
        try? FileManager.default.createDirectory(at: testRoot, withIntermediateDirectories: true)
        let file = testRoot.appendingPathComponent("config-\(UUID().uuidString).json")
        _ = FileManager.default.createFile(atPath: file.path, contents: Data(config.serialized()))
        return ["--config", file.path]
    }

    /// Adobe's "iOS/tvOS API Reference" (errors): "Provider not Available Error" when no providers are available.
    func testZeroMVPDsEndsWithProviderNotAvailableErrorAndNoPicker() async throws {
        let client = try makeClient()
        let status = await client.engine.setRequestor("EMPTY", serviceProviders: nil)
        XCTAssertEqual(status.status, 1)
        XCTAssertEqual(client.delegate.take(), [.setRequestorComplete(1)])
        let result = await client.engine.getAuthentication(forceAuthn: false, data: nil, filter: nil)
        XCTAssertEqual(result, AuthenticationStatus(status: 0, errorCode: "Provider not Available Error"))
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks.count, 2)
        XCTAssertEqual(callbacks[safe: 0], .setAuthenticationStatus(0, "Provider not Available Error"))
        assertTracking(callbacks[safe: 1], event: 0, head: ["false", nil, nil, nil])
        XCTAssertFalse(callbacks.contains { if case .displayProviderDialog = $0 { true } else { false } })
    }

    /// The pages a login or logout opens, as `navigateToUrl`'s (url, useSVC).
    func pages(_ client: Client) -> [(String, Bool)] {
        client.delegate.take().compactMap { if case .navigate(let url, let useSVC) = $0 { (url, useSVC) } else { nil } }
    }

    /// With `handleSVC`, only an MVPD whose configuration has `requiresSVC` gets `useSVC: true`, on its login page and
    /// on its logout page; another MVPD's pages keep false (Adobe's "iOS/tvOS API Reference", navigateToUrl:useSVC:).
    func testHandleSVCSetsUseSVCOnlyForTheMVPDThatRequiresIt() async throws {
        for (mvpd, required) in [("SVCCable", true), ("MockMVPD", false)] {
            let client = try makeClient()
            await ready(client)
            client.engine.setOptions(["handleSVC": true])
            let flow = await startLoginAtPicker(client)
            let selection = await client.engine.setSelectedProvider(mvpd)
            XCTAssertEqual(selection, .started, mvpd)
            let login = pages(client)
            XCTAssertEqual(login.map(\.1), [required], mvpd)
            let end = try await Browser().open(try XCTUnwrap(login.first?.0), fields: ["username": "demo", "password": "demo"])
            guard case .redirected(let redirect) = end else { return XCTFail("\(mvpd): login did not reach the redirect URL") }
            _ = try await client.engine.handleExternalURL(redirect)
            let loggedIn = await flow.value
            XCTAssertEqual(loggedIn, AuthenticationStatus(status: 1, errorCode: ""), mvpd)
            _ = client.delegate.take()
            let logout = Task { await client.engine.logout() }
            let navigated = await client.delegate.wait { if case .navigate = $0 { true } else { false } }
            XCTAssertTrue(navigated, mvpd)
            let logoutPages = pages(client)
            XCTAssertEqual(logoutPages.map(\.1), [required], mvpd)
            let left = try await Browser().open(try XCTUnwrap(logoutPages.first?.0), fields: [:])
            guard case .redirected(let back) = left else { return XCTFail("\(mvpd): logout page did not redirect") }
            _ = try await client.engine.handleExternalURL(back)
            _ = await logout.value
        }
    }

    func testWithoutHandleSVCNoPageHasUseSVC() async throws {
        let client = try makeClient()
        await ready(client)
        let flow = await startLoginAtPicker(client)
        let selection = await client.engine.setSelectedProvider("SVCCable")
        XCTAssertEqual(selection, .started)
        XCTAssertEqual(pages(client).map(\.1), [false])
        await client.engine.cancel()
        _ = await flow.value
    }

    func testDenialDetailsWithQuotesURLsAndNonASCIIArriveIntact() async throws {
        let client = try makeClient()
        await ready(client)
        try await login(client)
        let outcome = await client.engine.checkAuthorization("ch3", data: nil)
        guard case .failed("ch3", "User not Authorized Error", Self.denialDetails, let statuses) = outcome else {
            return XCTFail("expected the denial, got \(outcome)")
        }
        XCTAssertEqual(statuses.map(\.id), ["Z100"])
        XCTAssertEqual(statuses.first?.details, Self.denialDetails)
        let callbacks = client.delegate.take()
        XCTAssertEqual(callbacks[safe: 0], .tokenRequestFailed("ch3", "User not Authorized Error", Self.denialDetails))
        guard case .tokenRequestFailed(_, _, let description)? = callbacks[safe: 0] else { return }
        XCTAssertEqual(Array(description.utf8), Array(Self.denialDetails.utf8))
        assertStatus(callbacks.last, id: "Z100")
    }
}
