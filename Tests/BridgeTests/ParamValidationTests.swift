import AccessEnabler
import JSON
import JSONRPC
import XCTest

@testable import Bridge

/// Protocol/README.md "Errors": params by name, null = omitted, unknown names, wrong type or missing → -32602
/// naming the param (and the closest known name); -32002 before setRequestor.
final class ParamValidationTests: XCTestCase {
    private func invalidParams(_ written: [Written], file: StaticString = #filePath, line: UInt = #line) -> ErrorObject? {
        guard case .error(_, let error)? = written.last else {
            XCTFail("expected an error, got \(written)", file: file, line: line)
            return nil
        }
        XCTAssertEqual(error.code, .invalidParams, file: file, line: line)
        return error
    }

    func testMissingRequiredParamNamesTheParam() throws {
        let harness = try Harness()
        let error = invalidParams(harness.call("setRequestor", [:]))
        XCTAssertEqual(error?.message, "Invalid params: 'requestorID' is required (a string)")
        XCTAssertEqual(error?.data?["param"], "requestorID")
    }

    func testInitRefusesARedirectURLThatIsNotAnAbsoluteURL() throws {
        let harness = try Harness()
        for bad in ["", "not a url", "/relative/path", "adobepass:"] {
            let error = invalidParams(harness.call("init", ["redirectUrl": .string(bad)]))
            XCTAssertEqual(error?.data?["param"], "redirectUrl", bad)
        }
    }

    func testInitChecksTheDeviceAHostActsFor() throws {
        let harness = try Harness()
        let info = "eyJtb2RlbCI6IngifQ=="
        let cases: [(JSON, String)] = [
            (["deviceIdentifier": ""], "deviceIdentifier"),
            (["deviceIdentifier": "d", "forwardedFor": "not-an-address"], "forwardedFor"),
            (["deviceIdentifier": "d", "forwardedFor": "203.0.113.7:80"], "forwardedFor"),
            (["deviceIdentifier": "d", "deviceInfo": "%%%"], "deviceInfo"),
            (["deviceIdentifier": "d", "deviceInfo": "WzFd"], "deviceInfo"),  // base64 of [1], not an object
            (["forwardedFor": "203.0.113.7"], "forwardedFor"),
            (["deviceInfo": .string(info)], "deviceInfo"),
        ]
        for (params, name) in cases {
            XCTAssertEqual(invalidParams(harness.call("init", params))?.data?["param"], .string(name), "\(params)")
        }
        for address in ["203.0.113.7", "2001:db8::42"] {
            let written = harness.call("init", ["deviceIdentifier": "d", "deviceInfo": .string(info), "forwardedFor": .string(address)])
            guard case .result(_, let result)? = written.last else { return XCTFail("\(written)") }
            XCTAssertEqual(result, .object([:]))
        }
    }

    func testWrongTypeNamesTheParamAndTheType() throws {
        let harness = try Harness()
        harness.call("setRequestor", ["requestorID": "REF"])
        let error = invalidParams(harness.call("getAuthentication", ["forceAuthn": "yes"]))
        XCTAssertEqual(error?.message, "Invalid params: 'forceAuthn' must be a boolean, not string")
        let filter = invalidParams(harness.call("getAuthentication", ["filter": ["MockMVPD", 7]]))
        XCTAssertEqual(filter?.message, "Invalid params: 'filter' must be an array of strings (item 1 is number)")
        let resources = invalidParams(harness.call("checkPreauthorizedResources", ["resources": "ch1"]))
        XCTAssertEqual(resources?.data?["param"], "resources")
        let mvpd = invalidParams(harness.call("setSelectedProvider", ["mvpdId": 3]))
        XCTAssertEqual(mvpd?.message, "Invalid params: 'mvpdId' must be a string or null, not number")
        let missingMVPD = invalidParams(harness.call("setSelectedProvider", [:]))
        XCTAssertEqual(missingMVPD?.data?["param"], "mvpdId")
        let provider = invalidParams(harness.call("setRequestor", ["requestorID": "REF", "serviceProviders": ["ftp://x"]]))
        XCTAssertEqual(
            provider?.message, "Invalid params: 'serviceProviders' item 0 is not an https URL, nor an http URL on a loopback host")
        let plain = invalidParams(
            harness.call("setRequestor", ["requestorID": "REF", "serviceProviders": ["https://sp.example", "http://sp.example"]]))
        XCTAssertEqual(plain?.message, "Invalid params: 'serviceProviders' item 1 is not an https URL, nor an http URL on a loopback host")
    }

    func testNothingReachesTheEngineWhenParamsAreInvalid() throws {
        let harness = try Harness()
        harness.call("setRequestor", ["requestorID": "REF"])
        _ = harness.call("checkAuthorization", ["resource": 42])
        _ = harness.call("checkAuthorization", ["data": [:]])
        XCTAssertEqual(harness.engine?.calls.withLock { $0 }, ["setRequestor REF []"])
    }

    func testNullParamsCountAsOmittedAndDataObjectsAreOpen() throws {
        let harness = try Harness()
        harness.call("setRequestor", ["requestorID": "REF", "signedRequestorID": "old"])
        XCTAssertEqual(
            harness.call("checkAuthentication", .null).last,
            .result(RequestID(2), ["status": 0, "errorCode": "User Not Authenticated Error"]))
        _ = harness.call("getAuthentication", ["forceAuthn": .null, "data": ["email": "x", "anything": 1]])
        _ = harness.call("checkPreauthorizedResources", ["resources": ["ch1"], "cache": .null])
        XCTAssertEqual(harness.call("setOptions", ["device_info": "tv"]).last, .result(RequestID(5), [:]))
        XCTAssertEqual(
            harness.engine?.calls.withLock { $0 },
            [
                "setRequestor REF []", "checkAuthentication", "getAuthentication false {\"email\":\"x\",\"anything\":1} []",
                "checkPreauthorizedResources [\"ch1\"] true", "setOptions {\"device_info\":\"tv\"}",
            ])
    }

    func testUnknownMethodIsAnsweredWithTheServedMethodNearItOnlyWhenOneIsNear() throws {
        let harness = try Harness()
        let rows: [(method: String, closest: String?)] = [
            ("getAuthorisation", "getAuthorization"), ("getauthorization", "getAuthorization"), ("setRequester", "setRequestor"),
            ("logot", "logout"), ("checkAuthenticaton", "checkAuthentication"), ("rpc.discovr", "rpc.discover"),
            ("foobar", nil), ("subtract", nil), ("inti", nil), ("x", nil),
        ]
        for row in rows {
            guard case .error(_, let error)? = harness.call(row.method).last else { return XCTFail(row.method) }
            XCTAssertEqual(error.code, .methodNotFound, row.method)
            XCTAssertEqual(error.data?["method"], .string(row.method), row.method)
            XCTAssertEqual(error.data?["closest"], row.closest.map { .string($0) }, row.method)
            XCTAssertEqual(
                error.message, row.closest.map { "Method not found: '\(row.method)'; did you mean '\($0)'?" } ?? "Method not found",
                row.method)
        }
        // A callback's name says whose it is, not what served name it is near.
        guard case .error(_, let error)? = harness.call("setToken").last else { return XCTFail("setToken") }
        XCTAssertEqual(error.message, "Method not found: 'setToken' is sent by the daemon to the host")
        XCTAssertNil(error.data?["closest"])
    }

    func testNearNamesAreWithinAThirdOfTheNameIgnoringCase() {
        let offered = ["MockMVPD", "TempPass", "MockSSO", "MockPicker"]
        let rows: [(name: String, near: String?)] = [
            ("MockMvpd", "MockMVPD"), ("MockMVDP", "MockMVPD"), ("TempPas", "TempPass"), ("mocksso", "MockSSO"),
            ("Comcast", nil), ("DirecTV", nil), ("Temp", nil), ("", nil),
        ]
        for row in rows {
            XCTAssertEqual(Text.near(row.name, in: offered), row.near, row.name)
        }
        XCTAssertEqual(Text.closest(to: "Comcast", in: offered), "TempPass", "closest alone always answers")
    }

    func testUnknownParamNamesAreRefusedWithTheClosestKnownName() throws {
        let harness = try Harness()
        let webView = invalidParams(harness.call("init", ["webview": false]))
        XCTAssertEqual(webView?.message, "Invalid params: 'webview' is not a param of init; did you mean 'webView'?")
        XCTAssertEqual(webView?.data?["param"], "webview")
        XCTAssertEqual(webView?.data?["closest"], "webView")
        let requestor = invalidParams(harness.call("setRequestor", ["requestorId": "REF"]))
        XCTAssertEqual(requestor?.data?["closest"], "requestorID")
        harness.call("setRequestor", ["requestorID": "REF"])
        let resource = invalidParams(harness.call("getAuthorization", ["resource": "ch1", "resources": ["ch2"]]))
        XCTAssertEqual(resource?.message, "Invalid params: 'resources' is not a param of getAuthorization; did you mean 'resource'?")
        let none = invalidParams(harness.call("checkAuthentication", ["force": true]))
        XCTAssertEqual(none?.message, "Invalid params: 'force' is not a param of checkAuthentication, which takes none")
        XCTAssertEqual(harness.engine?.calls.withLock { $0 }, ["setRequestor REF []"])
    }

    /// setOptions is no open dictionary: a misspelled or unknown key is refused as for every other method, and
    /// nothing reaches the engine; its keys are the engine's, listed once (`Options`), and the document's.
    func testSetOptionsRefusesAnUnknownKeyWithTheClosestAndPassesNothingOn() throws {
        let harness = try Harness()
        let misspelled = invalidParams(harness.call("setOptions", ["handleSvc": true, "visitorID": "v1"]))
        XCTAssertEqual(misspelled?.message, "Invalid params: 'handleSvc' is not a param of setOptions; did you mean 'handleSVC'?")
        XCTAssertEqual(misspelled?.data?["param"], "handleSvc")
        XCTAssertEqual(misspelled?.data?["closest"], "handleSVC")
        let profile = invalidParams(harness.call("setOptions", ["applicationprofile": "p"]))
        XCTAssertEqual(profile?.data?["closest"], "applicationProfile")
        XCTAssertEqual(harness.engine?.calls.withLock { $0 } ?? [], [])
        XCTAssertEqual(harness.call("setOptions", ["applicationProfile": "p", "handleSVC": true]).last, .result(RequestID(3), [:]))
        XCTAssertEqual(harness.engine?.calls.withLock { $0 }, ["setOptions {\"applicationProfile\":\"p\",\"handleSVC\":true}"])
        XCTAssertEqual(Set(ParamNames.byMethod["setOptions"] ?? []), Set(Options.stringKeys + Options.boolKeys))
        XCTAssertEqual((ParamNames.byMethod["setOptions"] ?? []).count, (Options.stringKeys + Options.boolKeys).count)
    }

    /// getAuthentication's filter object: a featured MVPD must also be a TV provider (Adobe's "iOS/tvOS API
    /// Reference", getAuthentication:filter); the refusal names every id outside TV_PROVIDERS, once.
    func testAFeaturedProviderOutsideTVProvidersIsRefusedNamingIt() throws {
        let harness = try Harness()
        harness.call("setRequestor", ["requestorID": "REF"])
        let filter: JSON = ["TV_PROVIDERS": ["MockSSO"], "FEATURED_TV_PROVIDERS": ["MockPicker", "MockSSO", "Other", "MockPicker"]]
        let refused = invalidParams(harness.call("getAuthentication", ["filter": filter]))
        XCTAssertEqual(refused?.data?["param"], "filter")
        XCTAssertEqual(
            refused?.message,
            "Invalid params: 'filter' FEATURED_TV_PROVIDERS has 'MockPicker', 'Other', not in TV_PROVIDERS"
                + " (featured MVPDs must be TV providers too)")
        XCTAssertEqual(harness.engine?.calls.withLock { $0 }, ["setRequestor REF []"])
        // A subset, or either list alone, is accepted.
        for accepted: JSON in [
            ["TV_PROVIDERS": ["MockSSO", "MockPicker"], "FEATURED_TV_PROVIDERS": ["MockPicker"]], ["FEATURED_TV_PROVIDERS": ["Other"]],
            ["TV_PROVIDERS": ["MockSSO"]],
        ] {
            guard case .result? = harness.call("getAuthentication", ["filter": accepted]).last else {
                return XCTFail("refused \(accepted)")
            }
        }
    }

    func testPositionalParamsAreRejected() throws {
        let harness = try Harness()
        let error = invalidParams(harness.call("setRequestor", ["REF"]))
        XCTAssertEqual(error?.data?["param"], "params")
    }

    func testCallsNeedingARequestorAnswerMinus32002BeforeSetRequestor() throws {
        let harness = try Harness()
        for method in ["checkAuthentication", "getAuthentication", "getAuthenticationToken", "logout"] {
            guard case .error(_, let error)? = harness.call(method).last else { return XCTFail(method) }
            XCTAssertEqual(error.code, .requestorNotSet, method)
            XCTAssertNotNil(error.data, method)
        }
        let withParams: [(String, JSON)] = [
            ("setSelectedProvider", ["mvpdId": "MockMVPD"]), ("handleExternalURL", ["url": "adobepass://ios.app"]),
            ("checkPreauthorizedResources", ["resources": ["ch1"]]), ("checkAuthorization", ["resource": "ch1"]),
            ("getAuthorization", ["resource": "ch1"]), ("getMetadata", ["opCode": 0]),
        ]
        for (method, params) in withParams {
            guard case .error(_, let error)? = harness.call(method, params).last else { return XCTFail(method) }
            XCTAssertEqual(error.code, .requestorNotSet, method)
        }
        XCTAssertEqual(harness.call("setOptions", ["visitorID": "v1"]).last, .result(RequestID(11), [:]))
        XCTAssertEqual(harness.call("getSelectedProvider").last, .result(RequestID(12), ["mvpd": .null]))
        XCTAssertEqual(harness.engine?.calls.withLock { $0 }, ["setOptions {\"visitorID\":\"v1\"}", "getSelectedProvider"])
    }

    func testInitStartsAFreshInstanceWithoutARequestor() throws {
        let harness = try Harness()
        harness.call("setRequestor", ["requestorID": "REF"])
        XCTAssertEqual(
            harness.call("init", ["softwareStatement": "a.b.c", "redirectUrl": "myapp://done", "webView": false]).last,
            .result(RequestID(2), [:]))
        let engine = try XCTUnwrap(harness.engine)
        XCTAssertEqual(engine.configuration.softwareStatement, "a.b.c")
        XCTAssertEqual(engine.configuration.redirectURL, "myapp://done")
        XCTAssertFalse(engine.configuration.webView)
        guard case .error(_, let error)? = harness.call("checkAuthentication").last else { return XCTFail() }
        XCTAssertEqual(error.code, .requestorNotSet)
        let first = harness.engines.withLock { $0[0] }
        XCTAssertTrue(
            first.cancelled.load(ordering: .sequentiallyConsistent) || waitFor { first.cancelled.load(ordering: .sequentiallyConsistent) })
    }

    func testMethodsBeforeInitUseTheFlagDefaults() throws {
        let harness = try Harness()
        harness.call("setRequestor", ["requestorID": "REF"])
        let engine = try XCTUnwrap(harness.engine)
        XCTAssertEqual(engine.configuration.softwareStatement, "flag.jwt.sig")
        XCTAssertEqual(engine.configuration.redirectURL, "adobepass://ios.app")
        XCTAssertTrue(engine.configuration.webView)
    }

    func testGetMetadataOpCodeByNameOrNumberAndItsRequiredParams() throws {
        let harness = try Harness()
        harness.call("setRequestor", ["requestorID": "REF"])
        let missing = invalidParams(harness.call("getMetadata", ["opCode": "METADATA_AUTHORIZATION"]))
        XCTAssertEqual(missing?.message, "Invalid params: 'resource' is required for METADATA_AUTHORIZATION")
        let unknown = invalidParams(harness.call("getMetadata", ["opCode": 9]))
        XCTAssertEqual(unknown?.data?["param"], "opCode")
        let wrongKey = invalidParams(harness.call("getMetadata", ["opCode": 3, "userMetaKey": 7]))
        XCTAssertEqual(wrongKey?.data?["param"], "userMetaKey")
        // Without userMetaKey, op code 3 reads the whole user metadata object (Protocol/README.md, Values).
        _ = harness.call("getMetadata", ["opCode": 3])
        _ = harness.call("getMetadata", ["opCode": "METADATA_DEVICE_ID"])
        _ = harness.call("getMetadata", ["opCode": 1, "resource": "ch1"])
        XCTAssertEqual(
            harness.engine?.calls.withLock { Array($0.dropFirst()) },
            ["getMetadata userMetadataObject", "getMetadata deviceID", "getMetadata authorizationExpiry(resource: \"ch1\")"])
    }

    func testHostNotificationsAreNeverAnswered() throws {
        let harness = try Harness()
        harness.instance.handle(method: "noSuchMethod", params: nil, id: nil)
        harness.instance.handle(method: "setRequestor", params: [:], id: nil)
        harness.instance.handle(method: "setOptions", params: ["handleSVC": true], id: nil)
        guard case .error(_, let error)? = harness.call("noSuchMethod").last else { return XCTFail() }
        XCTAssertEqual(error.code, .methodNotFound)
        XCTAssertEqual(harness.connection.all.count, 1)
        XCTAssertEqual(harness.engine?.calls.withLock { $0 }, ["setOptions {\"handleSVC\":true}"])
    }
}

/// Polls `condition` for up to 5 s.
func waitFor(_ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(5)
    while Date() < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.005)
    }
    return false
}
