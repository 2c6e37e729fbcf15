import JSON
import JSONRPC
import XCTest

@testable import Bridge

/// Protocol/README.md: each response comes after its operation's notifications and its `result` repeats the terminal
/// callback's params; MVPD and status shapes.
final class ResultMappingTests: XCTestCase {
    private func ready() throws -> Harness {
        let harness = try Harness()
        harness.call("setRequestor", ["requestorID": "REF"])
        return harness
    }

    func testSetRequestorAnswersAfterSetRequestorComplete() throws {
        let harness = try Harness()
        XCTAssertEqual(
            harness.call("setRequestor", ["requestorID": "REF", "serviceProviders": ["http://127.0.0.1:9/"]]),
            [.notification("setRequestorComplete", ["status": 1]), .result(RequestID(1), ["status": 1])])
        XCTAssertEqual(harness.engine?.calls.withLock { $0 }, ["setRequestor REF [\"http://127.0.0.1:9/\"]"])
    }

    func testCheckAuthenticationResultRepeatsSetAuthenticationStatus() throws {
        let harness = try ready()
        let written = harness.callFresh("checkAuthentication")
        XCTAssertEqual(written.map(\.kind), ["setAuthenticationStatus", "sendTrackingData", "status", "result"])
        XCTAssertEqual(written[0], .notification("setAuthenticationStatus", ["status": 0, "errorCode": "User Not Authenticated Error"]))
        XCTAssertEqual(
            written[1],
            .notification("sendTrackingData", ["data": ["false", nil, nil, nil, "unknown", "restApiV2", "Linux"], "eventType": 0]))
        XCTAssertEqual(
            written[2],
            .notification("status", ["id": "N000", "errorId": "N000", "level": "info", "message": "The user is not authenticated"]))
        XCTAssertEqual(written[3], .result(RequestID(2), ["status": 0, "errorCode": "User Not Authenticated Error"]))
    }

    func testDisplayProviderDialogCarriesFullMVPDObjects() throws {
        let harness = try ready()
        let written = harness.callFresh("getAuthentication", ["filter": ["MockMVPD"]])
        guard case .notification("displayProviderDialog", let params) = written.first else { return XCTFail("\(written)") }
        let mvpds = try XCTUnwrap(params["mvpds"]?.arrayValue)
        XCTAssertEqual(mvpds.count, 3)
        XCTAssertEqual(
            mvpds[0],
            [
                "ID": "MockMVPD", "displayName": "Mock Cable", "logoURL": "https://logo.example/m.png", "enablePlatformServices": false,
                "boardingStatus": nil, "displayInPlatformPicker": false, "platformMappingId": nil, "isTempPass": false,
                "requiresSVC": false,
            ])
        XCTAssertEqual(mvpds[1]["isTempPass"], true)
        XCTAssertEqual(mvpds[1]["logoURL"], .null)
        XCTAssertEqual(mvpds[2]["boardingStatus"], "SUPPORTED")
        XCTAssertEqual(mvpds[2]["platformMappingId"], "MockSSO")
        XCTAssertEqual(mvpds[2]["enablePlatformServices"], true)
        XCTAssertEqual(mvpds[2]["displayInPlatformPicker"], true)
        XCTAssertEqual(mvpds[2]["requiresSVC"], true)
        XCTAssertEqual(
            mvpds[0].objectValue?.keys,
            [
                "ID", "displayName", "logoURL", "enablePlatformServices", "boardingStatus", "displayInPlatformPicker", "platformMappingId",
                "isTempPass", "requiresSVC",
            ])
    }

    func testSetSelectedProviderAnswersEmptyWhenTheLoginStartedElseTheStatus() throws {
        let harness = try ready()
        XCTAssertEqual(
            harness.callFresh("setSelectedProvider", ["mvpdId": "MockMVPD"]),
            [.notification("navigateToUrl", ["url": "http://127.0.0.1:1/login?code=1"]), .result(RequestID(2), [:])])
        XCTAssertEqual(
            harness.callFresh("setSelectedProvider", ["mvpdId": .null]),
            [
                .notification("setAuthenticationStatus", ["status": 0, "errorCode": "Provider not Selected Error"]),
                .notification("status", ["id": "N005", "errorId": "N005", "level": "info"]),
                .result(RequestID(3), ["status": 0, "errorCode": "Provider not Selected Error"]),
            ])
        XCTAssertEqual(harness.engine?.calls.withLock { $0.last }, "setSelectedProvider nil")
    }

    func testRegcodeStatusCarriesCodeURLAndNotAfterInMilliseconds() throws {
        let harness = try ready()
        XCTAssertEqual(
            harness.callFresh("setSelectedProvider", ["mvpdId": "Phone"]).first,
            .notification(
                "status",
                [
                    "id": "REGCODE", "errorId": "REGCODE", "level": "info", "code": "AB12CD", "url": "http://127.0.0.1:1/activate",
                    "notAfter": 1_800_000_000_123,
                ]))
    }

    func testHandleExternalURLOtherThanTheRedirectURLIsInvalidParams() throws {
        let harness = try ready()
        guard case .error(_, let error)? = harness.callFresh("handleExternalURL", ["url": "https://evil.example/"]).last else {
            return XCTFail()
        }
        XCTAssertEqual(error.code, .invalidParams)
        XCTAssertEqual(error.data?["param"], "url")
        XCTAssertEqual(
            harness.callFresh("handleExternalURL", ["url": "adobepass://ios.app?x=1"]),
            [
                .notification("setAuthenticationStatus", ["status": 1, "errorCode": ""]),
                .result(RequestID(3), ["status": 1, "errorCode": ""]),
            ])
    }

    func testAuthorizationResultsRepeatSetTokenOrTokenRequestFailed() throws {
        let harness = try ready()
        let mrss = "<rss version=\"2.0\"><channel><title>A &amp; B ü</title></channel></rss>"
        let granted = harness.callFresh("checkAuthorization", ["resource": .string(mrss), "data": ["k": "v"]])
        XCTAssertEqual(granted.first, .notification("setToken", ["token": "bWVkaWEtdG9rZW4=", "resource": .string(mrss)]))
        XCTAssertEqual(granted.last, .result(RequestID(2), ["token": "bWVkaWEtdG9rZW4=", "resource": .string(mrss)]))
        XCTAssertEqual(harness.engine?.calls.withLock { $0.last }, "checkAuthorization \(mrss) {\"k\":\"v\"}")
        let denied = harness.callFresh("getAuthorization", ["resource": "ch2"])
        let failure: JSON = [
            "resource": "ch2", "errorCode": "User not Authorized Error",
            "errorDescription": "Your subscription does not include \"Channel 2\".",
        ]
        XCTAssertEqual(denied.first, .notification("tokenRequestFailed", failure))
        XCTAssertEqual(
            denied[1],
            .notification(
                "status",
                [
                    "id": "Z100", "errorId": "Z100", "level": "error", "details": "Your subscription does not include \"Channel 2\".",
                    "resource": "ch2",
                ]))
        var explained = failure.objectValue ?? [:]
        explained["statuses"] = [
            [
                "id": "Z100", "errorId": "Z100", "level": "error", "details": "Your subscription does not include \"Channel 2\".",
                "resource": "ch2",
            ]
        ]
        XCTAssertEqual(denied.last, .result(RequestID(3), .object(explained)))
    }

    func testPreauthorizedResourcesAndMetadataResults() throws {
        let harness = try ready()
        XCTAssertEqual(
            harness.callFresh("checkPreauthorizedResources", ["resources": ["ch1", "ch2"], "cache": false]),
            [.notification("preauthorizedResources", ["resources": ["ch1"]]), .result(RequestID(2), ["resources": ["ch1"]])])
        let arguments: JSON = ["opCode": "METADATA_USER_META", "userMetaKey": "zip"]
        let expected: JSON = ["metadata": "ZW5jcnlwdGVk", "encrypted": true, "key": 3, "arguments": arguments]
        XCTAssertEqual(
            harness.callFresh("getMetadata", arguments),
            [.notification("setMetadataStatus", expected), .result(RequestID(3), expected)])
        XCTAssertEqual(
            harness.callFresh("getMetadata", ["opCode": 0]).last,
            .result(RequestID(4), ["metadata": 1_800_000_000_000, "encrypted": false, "key": 0, "arguments": ["opCode": 0]]))
    }

    func testLogoutAndGetSelectedProvider() throws {
        let harness = try ready()
        XCTAssertEqual(
            harness.callFresh("logout"),
            [
                .notification("setAuthenticationStatus", ["status": 0, "errorCode": "User Not Authenticated Error"]),
                .result(RequestID(2), ["status": 0, "errorCode": "User Not Authenticated Error"]),
            ])
        XCTAssertEqual(
            harness.callFresh("getSelectedProvider"),
            [.notification("selectedProvider", ["mvpd": nil]), .result(RequestID(3), ["mvpd": nil])])
    }

    func testCallsReachTheEngineInTheOrderSent() throws {
        let harness = try Harness()
        harness.send("setRequestor", ["requestorID": "REF"])
        for index in 0..<50 { harness.send("checkAuthorization", ["resource": .string("r\(index)")]) }
        _ = harness.connection.waitForAnswer(51)
        let calls = try XCTUnwrap(harness.engine?.calls.withLock { $0 })
        XCTAssertEqual(calls, ["setRequestor REF []"] + (0..<50).map { "checkAuthorization r\($0) nil" })
    }

    func testClosingTheConnectionCancelsItsInstanceOnly() throws {
        let harness = try Harness()
        harness.call("setRequestor", ["requestorID": "REF"])
        let other = Recorder()
        harness.makeInstance(writingTo: other).handle(method: "setRequestor", params: ["requestorID": "REF"], id: RequestID(1))
        _ = other.waitForAnswer(1)
        XCTAssertEqual(harness.openInstances, 2)
        harness.instance.close()
        let engines = harness.engines.withLock { $0 }
        XCTAssertTrue(waitFor { engines[0].cancelled.load(ordering: .sequentiallyConsistent) })
        XCTAssertFalse(engines[1].cancelled.load(ordering: .sequentiallyConsistent))
        XCTAssertEqual(harness.openInstances, 1)
    }
}

extension Written {
    /// The notification's method, or "result" / "error".
    var kind: String {
        switch self {
        case .notification(let method, _): return method
        case .result: return "result"
        case .error: return "error"
        }
    }
}
