import Foundation
import JSON
import Synchronization
import XCTest

@testable import AccessEnabler

/// The REST V2 + DCR client's wire behaviour, against a capture server (Adobe Pass REST API V2 headers;
/// "Dynamic Client Registration API").
final class RestClientTests: XCTestCase {
    static let statement = "h.p.s"
    static let deviceInfo = "eyJtb2RlbCI6IngifQ=="

    func makeClient(_ server: CaptureServer, store: TokenStore, clock: SkewedClock = SkewedClock(local: { Date() })) -> RestClient {
        RestClient(
            baseURL: BackendURL(server.url), softwareStatement: Self.statement, redirectURL: "adobepass://ios.app", store: store,
            clock: clock,
            transport: HTTPTransport(), timeout: .seconds(5), maxThrottleRetries: 2,
            headers: {
                DeviceHeaders(
                    deviceIdentifier: DeviceInfo.deviceIdentifierHeader("ba23d141-d715-561c-94f4-e9e4c966b1eb"),
                    deviceInfo: Self.deviceInfo, visitorID: "ECID-42")
            })
    }

    static let registered = CaptureServer.Response(
        status: 201,
        body:
            #"{"client_id":"cid","client_secret":"secret","redirect_uris":[],"grant_types":["client_credentials"],"scopes":[],"client_id_issued_at":1}"#
    )
    static func token(_ value: String, expiresIn: Int = 21600) -> CaptureServer.Response {
        CaptureServer.Response(
            status: 201,
            body:
                #"{"id":"t","access_token":"\#(value)","created_at":\#(Int64(Date().timeIntervalSince1970 * 1000)),"expires_in":\#(expiresIn),"token_type":"bearer"}"#
        )
    }
    static let ok = CaptureServer.Response(status: 200, body: #"{"profiles":{}}"#)
    static let unauthorized = CaptureServer.Response(
        status: 401, body: #"{"status":401,"code":"invalid_access_token_client_application","action":"application-registration"}"#)

    func testRegistersOnceThenSendsTheDeviceHeadersWithTheBearer() async throws {
        let server = try CaptureServer(responses: [Self.registered, Self.token("AT1"), Self.ok])
        defer { server.stop() }
        let store = try TokenStore(directory: temporaryDirectory())
        let client = makeClient(server, store: store)
        let result = await client.call("GET", "/api/v2/REF/profiles")
        guard case .ok(let body) = result else { return XCTFail("\(result)") }
        XCTAssertEqual(body, ["profiles": [:]])
        let requests = server.requests
        XCTAssertEqual(
            requests.map { $0.method + " " + $0.path }, ["POST /o/client/register", "POST /o/client/token", "GET /api/v2/REF/profiles"])
        let register = try JSON.parse(requests[0].body)
        XCTAssertEqual(register["software_statement"], .string(Self.statement))
        XCTAssertEqual(register["redirect_uri"], "adobepass://ios.app")
        XCTAssertEqual(requests[0].headers["x-device-info"], Self.deviceInfo)
        XCTAssertNil(requests[0].headers["authorization"])
        XCTAssertEqual(requests[1].body, "client_id=cid&client_secret=secret&grant_type=client_credentials")
        XCTAssertEqual(requests[1].headers["content-type"], "application/x-www-form-urlencoded")
        let call = requests[2].headers
        XCTAssertEqual(call["authorization"], "Bearer AT1")
        XCTAssertEqual(call["ap-device-identifier"], "fingerprint YmEyM2QxNDEtZDcxNS01NjFjLTk0ZjQtZTllNGM5NjZiMWVi")
        XCTAssertEqual(call["x-device-info"], Self.deviceInfo)
        XCTAssertEqual(call["ap-visitor-identifier"], "ECID-42")

        // A second client on the same store reuses credentials and token: no DCR call.
        let again = makeClient(server, store: store)
        _ = await again.call("GET", "/api/v2/REF/profiles")
        XCTAssertEqual(server.requests.count, 4)
        XCTAssertEqual(server.requests[3].path, "/api/v2/REF/profiles")
    }

    /// A host acting for a device: its identifier, info and address on every REST V2 call.
    func testTheDeviceAHostActsForIsOnEveryCall() async throws {
        let server = try CaptureServer(responses: [Self.registered, Self.token("AT1"), Self.ok, Self.ok])
        defer { server.stop() }
        let client = RestClient(
            baseURL: BackendURL(server.url), softwareStatement: Self.statement, redirectURL: "adobepass://ios.app",
            store: try TokenStore(directory: temporaryDirectory()), clock: SkewedClock(local: { Date() }), transport: HTTPTransport(),
            timeout: .seconds(5), maxThrottleRetries: 2,
            headers: {
                DeviceHeaders(
                    deviceIdentifier: DeviceInfo.deviceIdentifierHeader("tv-0042"), deviceInfo: Self.deviceInfo, visitorID: nil,
                    forwardedFor: "2001:db8::42")
            })
        _ = await client.call("GET", "/api/v2/REF/profiles")
        _ = await client.call("POST", "/api/v2/REF/decisions/authorize/MockMVPD", json: ["resources": ["ch1"]])
        let calls = server.requests.filter { $0.path.hasPrefix("/api/v2/") }
        XCTAssertEqual(calls.count, 2)
        for call in calls {
            XCTAssertEqual(call.headers["ap-device-identifier"], "fingerprint " + Data("tv-0042".utf8).base64EncodedString())
            XCTAssertEqual(call.headers["x-device-info"], Self.deviceInfo)
            XCTAssertEqual(call.headers["x-forwarded-for"], "2001:db8::42")
        }
    }

    func testA401RefreshesTheTokenOnceWithoutReRegistering() async throws {
        let server = try CaptureServer(responses: [Self.registered, Self.token("AT1"), Self.unauthorized, Self.token("AT2"), Self.ok])
        defer { server.stop() }
        let client = makeClient(server, store: try TokenStore(directory: temporaryDirectory()))
        let result = await client.call("POST", "/api/v2/REF/decisions/authorize/M", json: ["resources": ["r"]])
        guard case .ok = result else { return XCTFail("\(result)") }
        let paths = server.requests.map(\.path)
        XCTAssertEqual(
            paths,
            [
                "/o/client/register", "/o/client/token", "/api/v2/REF/decisions/authorize/M", "/o/client/token",
                "/api/v2/REF/decisions/authorize/M",
            ])
        XCTAssertEqual(server.requests[4].headers["authorization"], "Bearer AT2")
        XCTAssertEqual(server.requests[4].body, #"{"resources":["r"]}"#)
        XCTAssertEqual(server.requests[4].headers["content-type"], "application/json;charset=utf-8")
    }

    func testASecond401IsReturnedNotRetriedForever() async throws {
        let server = try CaptureServer(responses: [
            Self.registered, Self.token("AT1"), Self.unauthorized, Self.token("AT2"), Self.unauthorized,
        ])
        defer { server.stop() }
        let client = makeClient(server, store: try TokenStore(directory: temporaryDirectory()))
        let result = await client.call("GET", "/api/v2/REF/profiles")
        guard case .httpError(401, let error) = result else { return XCTFail("\(result)") }
        XCTAssertEqual(error?["code"], "invalid_access_token_client_application")
        XCTAssertEqual(server.requests.filter { $0.path == "/o/client/register" }.count, 1)
        XCTAssertEqual(server.requests.count, 5)
    }

    func testATokenAboutToExpireIsRefreshedBeforeTheCall() async throws {
        let server = try CaptureServer(responses: [Self.registered, Self.token("AT1", expiresIn: 30), Self.ok, Self.token("AT2"), Self.ok])
        defer { server.stop() }
        let client = makeClient(server, store: try TokenStore(directory: temporaryDirectory()))
        _ = await client.call("GET", "/api/v2/REF/profiles")
        _ = await client.call("GET", "/api/v2/REF/profiles")
        XCTAssertEqual(
            server.requests.map(\.path),
            ["/o/client/register", "/o/client/token", "/api/v2/REF/profiles", "/o/client/token", "/api/v2/REF/profiles"])
        XCTAssertEqual(server.requests[4].headers["authorization"], "Bearer AT2")
    }

    func testRefusedSoftwareStatementIsARegistrationFailure() async throws {
        let server = try CaptureServer(responses: [CaptureServer.Response(status: 400, body: #"{"error":"invalid_software_statement"}"#)])
        defer { server.stop() }
        let client = makeClient(server, store: try TokenStore(directory: temporaryDirectory()))
        let result = await client.call("GET", "/api/v2/REF/configuration")
        guard case .registration(.invalidSoftwareStatement) = result else { return XCTFail("\(result)") }
        XCTAssertEqual(Engine.configurationFailureStatus(result).id, "R400")
    }

    func testGarbageAndWrongContentTypeAreNotJSON() async throws {
        let html = CaptureServer.Response(status: 200, headers: [("Content-Type", "text/html")], body: "<html></html>")
        let broken = CaptureServer.Response(status: 200, body: #"{"profiles":"#)
        let server = try CaptureServer(responses: [Self.registered, Self.token("AT1"), html, broken])
        defer { server.stop() }
        let client = makeClient(server, store: try TokenStore(directory: temporaryDirectory()))
        guard case .garbage = await client.call("GET", "/api/v2/REF/profiles") else { return XCTFail("html accepted") }
        guard case .garbage = await client.call("GET", "/api/v2/REF/profiles") else { return XCTFail("truncated JSON accepted") }
    }

    /// The four headers the client reads are found in any case and with blanks around their values; a name of
    /// the same length that is not one of them is passed over.
    func testReadHeadersAreMatchedInAnyCaseAndLookalikesArePassedOver() async throws {
        let ahead = DateHeader.format(Date().addingTimeInterval(3600))
        let shouted = CaptureServer.Response(
            status: 200, headers: [("CONTENT-type", " \tapplication/json\t "), ("dATE", ahead)], body: #"{"profiles":{}}"#)
        let lookalike = CaptureServer.Response(status: 200, headers: [("Content-Typo", "application/json")], body: #"{"profiles":{}}"#)
        let server = try CaptureServer(responses: [Self.registered, Self.token("AT1"), shouted, lookalike])
        defer { server.stop() }
        let clock = SkewedClock(local: { Date() })
        let client = makeClient(server, store: try TokenStore(directory: temporaryDirectory()), clock: clock)
        guard case .ok = await client.call("GET", "/api/v2/REF/profiles") else { return XCTFail("shouted Content-Type not read") }
        XCTAssertEqual(clock.now().timeIntervalSinceNow, 3600, accuracy: 2)
        guard case .garbage = await client.call("GET", "/api/v2/REF/profiles") else { return XCTFail("Content-Typo read as Content-Type") }
    }

    func testDateHeaderSetsTheSkew() async throws {
        let ahead = DateHeader.format(Date().addingTimeInterval(3600))
        var response = Self.ok
        response.headers.append(("Date", ahead))
        let server = try CaptureServer(responses: [Self.registered, Self.token("AT1"), response])
        defer { server.stop() }
        let clock = SkewedClock(local: { Date() })
        let client = makeClient(server, store: try TokenStore(directory: temporaryDirectory()), clock: clock)
        _ = await client.call("GET", "/api/v2/REF/profiles")
        XCTAssertEqual(clock.now().timeIntervalSinceNow, 3600, accuracy: 2)
    }
}

/// setOptions reaches the wire on the next request (never queued).
final class OptionsOnTheWireTests: XCTestCase {
    func testVisitorIDAndDeviceInfoFromSetOptions() async throws {
        let configuration = CaptureServer.Response(
            status: 200,
            body:
                #"{"device":"unknown","clientType":"html5","os":"Linux","requestor":{"id":"REF","name":"R","mvpds":[{"id":"M","displayName":"M Cable","logoUrl":"https://l/x.png","isTempPass":false}]}}"#
        )
        let server = try CaptureServer(responses: [RestClientTests.registered, RestClientTests.token("AT1"), configuration])
        defer { server.stop() }
        let delegate = RecordingDelegate()
        let engine = Engine(
            configuration: AccessEnablerConfiguration(
                backendURL: BackendURL(server.url), softwareStatement: "h.p.s", deviceID: "device-42"),
            store: try TokenStore(directory: temporaryDirectory()), delegate: delegate)
        engine.setOptions(["visitorID": "ECID-7", "device_info": "eyJtb2RlbCI6IlRWIn0=", "applicationProfile": "p"])
        let status = await engine.setRequestor("REF", serviceProviders: nil)
        XCTAssertEqual(status.status, 1)
        // The configuration request (setRequestor's re-sync, GET profiles, follows it).
        let call = try XCTUnwrap(server.requests.first { $0.path.hasPrefix("/api/v2/REF/configuration") })
        XCTAssertEqual(call.path, "/api/v2/REF/configuration?profile=p")
        XCTAssertEqual(call.headers["ap-visitor-identifier"], "ECID-7")
        XCTAssertEqual(call.headers["x-device-info"], "eyJtb2RlbCI6IlRWIn0=")
        XCTAssertEqual(call.headers["ap-device-identifier"], "fingerprint " + Data("device-42".utf8).base64EncodedString())
        XCTAssertEqual(server.requests[0].headers["x-device-info"], "eyJtb2RlbCI6IlRWIn0=")
        // The picker lists the configuration's MVPD with the SDK's property names.
        let flow = Task { await engine.getAuthentication(forceAuthn: false, data: nil, filter: nil) }
        let shown = await delegate.wait { if case .displayProviderDialog = $0 { true } else { false } }
        XCTAssertTrue(shown)
        await engine.cancel()
        _ = await flow.value
        XCTAssertEqual(delegate.callbacks.first, .setRequestorComplete(1))
        XCTAssertEqual(delegate.callbacks[1], .displayProviderDialog(["M"]))
    }
}

/// `applicationProfile` is the configuration request's `profile` query parameter (Adobe's "REST API V2" OpenAPI
/// document, "Retrieve configuration for specific service provider"), percent-encoded; without it (or empty) there
/// is no query.
final class ApplicationProfileTests: XCTestCase {
    static let configuration = CaptureServer.Response(
        status: 200, body: #"{"requestor":{"id":"REF","name":"R","mvpds":[{"id":"M","displayName":"M Cable"}]}}"#)

    func configurationPath(options: JSONObject?) async throws -> String? {
        let server = try CaptureServer(responses: [RestClientTests.registered, RestClientTests.token("AT1"), Self.configuration])
        defer { server.stop() }
        let engine = Engine(
            configuration: AccessEnablerConfiguration(
                backendURL: BackendURL(server.url), softwareStatement: "h.p.s", deviceID: "device-42"),
            store: try TokenStore(directory: temporaryDirectory()), delegate: RecordingDelegate())
        if let options { engine.setOptions(options) }
        let status = await engine.setRequestor("REF", serviceProviders: nil)
        XCTAssertEqual(status.status, 1)
        return server.requests.first { $0.path.hasPrefix("/api/v2/REF/configuration") }?.path
    }

    func testTheProfileIsSentPercentEncodedOnTheConfigurationRequest() async throws {
        let path = try await configurationPath(options: ["applicationProfile": "Living Room/TV & más"])
        XCTAssertEqual(path, "/api/v2/REF/configuration?profile=Living%20Room%2FTV%20%26%20m%C3%A1s")
    }

    func testNoProfileMeansNoQuery() async throws {
        let without = try await configurationPath(options: nil)
        XCTAssertEqual(without, "/api/v2/REF/configuration")
        let empty = try await configurationPath(options: ["applicationProfile": ""])
        XCTAssertEqual(empty, "/api/v2/REF/configuration")
    }
}

final class LogRedactionTests: XCTestCase {
    func testLogLinesCarryNoSecretsCodesOrQueries() async throws {
        let server = try CaptureServer(responses: [RestClientTests.registered, RestClientTests.token("SECRET-AT"), RestClientTests.ok])
        defer { server.stop() }
        let lines = Mutex<[String]>([])
        let client = RestClient(
            baseURL: BackendURL(server.url), softwareStatement: "h.p.s", redirectURL: "adobepass://ios.app",
            store: try TokenStore(directory: temporaryDirectory()), clock: SkewedClock(local: { Date() }), transport: HTTPTransport.shared,
            timeout: .seconds(5), maxThrottleRetries: 1,
            headers: { DeviceHeaders(deviceIdentifier: DeviceInfo.deviceIdentifierHeader("d"), deviceInfo: "e30=", visitorID: nil) },
            log: { _, line in lines.withLock { $0.append(line()) } })
        _ = await client.call("GET", "/api/v2/REF/profiles/code/ABC1234", query: [("redirectUrl", "adobepass://ios.app")])
        let logged = lines.withLock { $0 }
        XCTAssertEqual(
            logged, ["POST /o/client/register → 201", "POST /o/client/token → 201", "GET /api/v2/REF/profiles/code/<code> → 200"])
        for line in logged {
            XCTAssertFalse(line.contains("SECRET") || line.contains("secret") || line.contains("ABC1234") || line.contains("h.p.s"))
        }
    }
}

extension RestClientTests {
    func testInvalidClientRegistersOnceMore() async throws {
        let invalid = CaptureServer.Response(status: 400, body: #"{"error":"invalid_client"}"#)
        let server = try CaptureServer(responses: [Self.registered, invalid, Self.registered, Self.token("AT9"), Self.ok])
        defer { server.stop() }
        let client = makeClient(server, store: try TokenStore(directory: temporaryDirectory()))
        let result = await client.call("GET", "/api/v2/REF/profiles")
        guard case .ok = result else { return XCTFail("\(result)") }
        XCTAssertEqual(
            server.requests.map(\.path),
            ["/o/client/register", "/o/client/token", "/o/client/register", "/o/client/token", "/api/v2/REF/profiles"])
        XCTAssertEqual(server.requests[4].headers["authorization"], "Bearer AT9")
    }
}
