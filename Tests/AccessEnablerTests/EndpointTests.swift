import Foundation
import JSON
import XCTest

@testable import AccessEnabler

/// The REST API V2 / DCR endpoint layer (`Sources/AccessEnabler/RESTV2/Endpoints.swift`): what each operation
/// puts on the wire and how its answers read, with no network.
final class EndpointTests: XCTestCase {
    /// A request as compared here: method, URL, headers in order, body text.
    struct Wire: Equatable, CustomStringConvertible {
        var method: String
        var url: String
        var headers: [String]
        var body: String?

        var description: String { "\(method) \(url)\n  \(headers.joined(separator: "\n  "))\n  body: \(body ?? "none")" }
    }

    static let base = try! BackendURL("https://sp.example/")
    static let device = DeviceHeaders(
        deviceIdentifier: DeviceInfo.deviceIdentifierHeader("dev"), deviceInfo: "e30=", visitorID: "ECID-1", forwardedFor: "2001:db8::1")
    /// The headers every REST API V2 call starts with, for `device` and the token "AT".
    static let fixed = [
        "Authorization: Bearer AT", "AP-Device-Identifier: fingerprint ZGV2", "X-Device-Info: e30=", "Accept: application/json",
        "AP-Visitor-Identifier: ECID-1", "X-Forwarded-For: 2001:db8::1",
    ]
    static let form = "Content-Type: application/x-www-form-urlencoded"
    static let json = "Content-Type: application/json;charset=utf-8"

    static func wire<Response>(_ endpoint: Endpoint<Response>) -> Wire? {
        let request = endpoint.request(on: base, token: "AT", device: device)
        return Wire(
            method: request.method, url: request.url, headers: request.headers.map { "\($0.0): \($0.1)" },
            body: request.body.map { String(decoding: $0, as: UTF8.self) })
    }

    func testEachEndpointPutsItsMethodPathHeadersAndBodyOnTheWire() {
        let identity = [("AP-TempPass-Identity", "eyJlbWFpbCI6ImFAYi5jIn0=")]
        let partner = ("AP-Partner-Framework-Status", "c3RhdHVz")
        let rows: [(String, Wire?, Wire)] = [
            (
                "configuration", Self.wire(RESTV2.configuration("REF")),
                Wire(method: "GET", url: "https://sp.example/api/v2/REF/configuration", headers: Self.fixed)
            ),
            (
                "configuration, requestor with a space and unicode", Self.wire(RESTV2.configuration("Ré f/1")),
                Wire(method: "GET", url: "https://sp.example/api/v2/R%C3%A9%20f%2F1/configuration", headers: Self.fixed)
            ),
            (
                "createSession with a TempPass identity",
                Self.wire(RESTV2.createSession("REF", mvpd: "Mock MVPD", redirectURL: "adobepass://ios.app", identity: identity)),
                Wire(
                    method: "POST", url: "https://sp.example/api/v2/REF/sessions",
                    headers: Self.fixed + ["AP-TempPass-Identity: eyJlbWFpbCI6ImFAYi5jIn0=", Self.form],
                    body: "mvpd=Mock%20MVPD&domainName=adobe.com&redirectUrl=adobepass%3A%2F%2Fios.app")
            ),
            (
                "createSession without identity",
                Self.wire(RESTV2.createSession("REF", mvpd: "M", redirectURL: "https://app.example/done", identity: [])),
                Wire(
                    method: "POST", url: "https://sp.example/api/v2/REF/sessions", headers: Self.fixed + [Self.form],
                    body: "mvpd=M&domainName=adobe.com&redirectUrl=https%3A%2F%2Fapp.example%2Fdone")
            ),
            (
                "profile of an MVPD with unicode", Self.wire(RESTV2.profile("REF", mvpd: "Télé+1", headers: [partner])),
                Wire(
                    method: "GET", url: "https://sp.example/api/v2/REF/profiles/T%C3%A9l%C3%A9%2B1",
                    headers: Self.fixed + ["AP-Partner-Framework-Status: c3RhdHVz"])
            ),
            (
                "profile by code", Self.wire(RESTV2.profile("REF", code: "AB C1")),
                Wire(method: "GET", url: "https://sp.example/api/v2/REF/profiles/code/AB%20C1", headers: Self.fixed)
            ),
            (
                "authorize", Self.wire(RESTV2.authorize("REF", mvpd: "M V", resources: ["ch 1"], headers: identity)),
                Wire(
                    method: "POST", url: "https://sp.example/api/v2/REF/decisions/authorize/M%20V",
                    headers: Self.fixed + ["AP-TempPass-Identity: eyJlbWFpbCI6ImFAYi5jIn0=", Self.json],
                    body: #"{"resources":["ch 1"]}"#)
            ),
            (
                "preauthorize", Self.wire(RESTV2.preauthorize("REF", mvpd: "M", resources: ["a", "b"])),
                Wire(
                    method: "POST", url: "https://sp.example/api/v2/REF/decisions/preauthorize/M", headers: Self.fixed + [Self.json],
                    body: #"{"resources":["a","b"]}"#)
            ),
            (
                "logout", Self.wire(RESTV2.logout("REF", mvpd: "M/1", redirectURL: "adobepass://ios.app")),
                Wire(
                    method: "GET", url: "https://sp.example/api/v2/REF/logout/M%2F1?redirectUrl=adobepass%3A%2F%2Fios.app",
                    headers: Self.fixed)
            ),
            (
                "partner session",
                Self.wire(RESTV2.partnerSession("REF", partner: "apple", redirectURL: "adobepass://ios.app", status: "c3RhdHVz")),
                Wire(
                    method: "POST", url: "https://sp.example/api/v2/REF/sessions/sso/apple",
                    headers: Self.fixed + ["AP-Partner-Framework-Status: c3RhdHVz", Self.form],
                    body: "domainName=adobe.com&redirectUrl=adobepass%3A%2F%2Fios.app")
            ),
            (
                "partner profile",
                Self.wire(RESTV2.partnerProfile("REF", partner: "apple", samlResponse: "<a>\n  x </a>", status: "c3RhdHVz")),
                Wire(
                    method: "POST", url: "https://sp.example/api/v2/REF/profiles/sso/apple",
                    headers: Self.fixed + ["AP-Partner-Framework-Status: c3RhdHVz", Self.form],
                    body: "SAMLResponse=" + FormEncoding.escape(Data("<a> x </a>".utf8).base64EncodedString()))
            ),
            (
                "DCR register", Self.wire(RESTV2.register(softwareStatement: "h.p.s", redirectURL: "adobepass://ios.app")),
                Wire(
                    method: "POST", url: "https://sp.example/o/client/register",
                    headers: [Self.json, "Accept: application/json", "X-Device-Info: e30="],
                    body: #"{"software_statement":"h.p.s","redirect_uri":"adobepass://ios.app"}"#)
            ),
            (
                "DCR token", Self.wire(RESTV2.token(ClientCredentials(id: "c id", secret: "s&1"))),
                Wire(
                    method: "POST", url: "https://sp.example/o/client/token",
                    headers: [Self.form, "Accept: application/json", "X-Device-Info: e30="],
                    body: "client_id=c%20id&client_secret=s%261&grant_type=client_credentials")
            ),
        ]
        for (name, actual, expected) in rows {
            XCTAssertEqual(actual, expected, name)
        }
    }

    func testTheDeviceHeadersThatAreNotSetAreLeftOut() {
        let request = RESTV2.configuration("REF").request(
            on: Self.base, token: "AT", device: DeviceHeaders(deviceIdentifier: DeviceInfo.deviceIdentifierHeader("d"), deviceInfo: "i"))
        XCTAssertEqual(request.headers.map(\.0), ["Authorization", "AP-Device-Identifier", "X-Device-Info", "Accept"])
        XCTAssertNil(request.body)
    }

    /// `Adobe-Subject-Token` and `AD-Service-Token` go on sessions create, profiles (all and one MVPD's), decisions
    /// and logout — the calls Adobe's single sign-on flows name — after the device headers; never on the others.
    func testSingleSignOnTokensGoOnTheCallsAdobesFlowsName() throws {
        var device = Self.device
        device.singleSignOn = SingleSignOnTokens(subjectToken: "SUB.JWT.S", serviceToken: "SVC.JWT.S").headers
        func headers<Response>(_ endpoint: Endpoint<Response>) throws -> [String] {
            endpoint.request(on: Self.base, token: "AT", device: device).headers.map { "\($0.0): \($0.1)" }
        }
        let tokens = ["Adobe-Subject-Token: SUB.JWT.S", "AD-Service-Token: SVC.JWT.S"]
        let with: [(String, [String])] = [
            ("sessions", try headers(RESTV2.createSession("REF", mvpd: "M", redirectURL: "a://b", identity: []))),
            ("profiles", try headers(RESTV2.profiles("REF"))),
            ("profiles/{mvpd}", try headers(RESTV2.profile("REF", mvpd: "M"))),
            ("authorize", try headers(RESTV2.authorize("REF", mvpd: "M", resources: ["r"]))),
            ("preauthorize", try headers(RESTV2.preauthorize("REF", mvpd: "M", resources: ["r"]))),
            ("logout", try headers(RESTV2.logout("REF", mvpd: "M", redirectURL: "a://b"))),
        ]
        for (name, sent) in with {
            XCTAssertEqual(Array(sent.prefix(Self.fixed.count + 2)), Self.fixed + tokens, name)
        }
        let without: [(String, [String])] = [
            ("configuration", try headers(RESTV2.configuration("REF"))),
            ("profiles/code", try headers(RESTV2.profile("REF", code: "C"))),
        ]
        for (name, sent) in without { XCTAssertEqual(sent, Self.fixed, name) }
        XCTAssertEqual(SingleSignOnTokens(serviceToken: "S").headers.map(\.0), ["AD-Service-Token"])
        XCTAssertTrue(SingleSignOnTokens().isEmpty)
    }

    func testAnAnswerIsTypedOnlyForA2xxBodyOfItsShape() {
        let endpoint = RESTV2.profile("REF", mvpd: "M")
        let rows: [(String, APIResult, Bool)] = [
            ("profiles object", .ok(["profiles": [:]]), true),
            ("no profiles", .ok(["decisions": []]), false),
            ("empty body", .ok(.null), false),
            ("http error", .httpError(status: 404, error: ["code": "x"]), false),
            ("transport", .transport(.timeout), false),
        ]
        for (name, result, typed) in rows {
            XCTAssertEqual(endpoint.answer(result).value != nil, typed, name)
        }
    }

    func testEnhancedErrorsReadFromErrorBodies() {
        let rows: [(String, APIResult, EnhancedError?)] = [
            (
                "full",
                .httpError(
                    status: 403,
                    error: ["status": 403, "code": "temporary_access_expired", "message": "m", "details": "d", "action": "none"]),
                EnhancedError(status: 403, code: "temporary_access_expired", message: "m", details: "d", action: ErrorAction.none)
            ),
            (
                "code only", .httpError(status: 400, error: ["code": "invalid_parameter_resources"]),
                EnhancedError(code: "invalid_parameter_resources")
            ),
            ("no body", .httpError(status: 500, error: nil), nil),
            ("not an error", .ok(["code": "x"]), nil),
            ("throttled", .throttled, nil),
        ]
        for (name, result, expected) in rows {
            XCTAssertEqual(result.enhancedError, expected, name)
        }
        // Without an `action`, the code's documented one.
        XCTAssertEqual(EnhancedError(code: "authenticated_profile_missing").action, .authentication)
        XCTAssertEqual(EnhancedError(code: "temporary_access_duration_limit_exceeded").action, .authentication)
        XCTAssertTrue(EnhancedError(code: "temporary_access_duration_limit_exceeded").endsTempPass)
        XCTAssertEqual(EnhancedError(code: "authorization_denied_by_mvpd").action, .none)
        XCTAssertEqual(EnhancedError(code: "network_connection_timeout").action, .retry)
        XCTAssertEqual(EnhancedError(code: "some_future_code").action, .none)
        // An `action` the error carries wins over the code's.
        XCTAssertEqual(EnhancedError(["code": "authorization_denied_by_mvpd", "action": "retry"])?.action, .retry)
    }

    func testSessionAnswersReadTheirAction() {
        let rows: [(JSON, SessionAnswer.Action, String?, String?, Int64?)] = [
            (["actionName": "authenticate", "code": "C", "url": "/authenticate/REF/C", "notAfter": "1700"], .authenticate, "C", nil, 1700),
            (["actionName": "authorize", "mvpd": "M"], .authorize, nil, "M", nil),
            (
                ["actionName": "partner_profile", "authenticationRequest": ["request": "tok", "attributesNames": ["a", 1]]],
                .partnerProfile, nil, nil, nil
            ),
            (["actionName": "pfs_fallback", "mvpd": "M"], .other("pfs_fallback"), nil, "M", nil),
            (.null, .other(nil), nil, nil, nil),
        ]
        for (body, action, code, mvpd, notAfter) in rows {
            let session = SessionAnswer(body)
            XCTAssertEqual(session?.action, action, "\(body)")
            XCTAssertEqual(session?.code, code, "\(body)")
            XCTAssertEqual(session?.mvpd, mvpd, "\(body)")
            XCTAssertEqual(session?.notAfter, notAfter, "\(body)")
        }
        let partner = SessionAnswer(["authenticationRequest": ["request": "tok", "attributesNames": ["a", 1, "b"]]])
        XCTAssertEqual(partner?.partnerRequest, "tok")
        XCTAssertEqual(partner?.attributeNames, ["a", "b"])
    }

    func testProfilesAnswersPreferTheAskedMVPD() {
        let body: JSON = ["profiles": ["A": ["notAfter": 1], "B": ["notAfter": 2], "C": "not a profile"]]
        let rows: [(String?, String?)] = [("B", "B"), ("A", "A"), ("C", "A"), ("Z", "A"), (nil, "A")]
        for (preferring, expected) in rows {
            XCTAssertEqual(ProfilesAnswer(body)?.first(preferring: preferring)?.mvpd, expected, "\(preferring ?? "nil")")
        }
        XCTAssertNil(ProfilesAnswer(["profiles": [:]])?.first(preferring: "A"))
        XCTAssertNil(ProfilesAnswer(["profiles": []]))
    }

    func testDecisionsReadPermitsDeniesAndExpiries() {
        let body: JSON = [
            "decisions": [
                ["resource": "a", "authorized": true, "source": "degradation", "token": ["serializedToken": "T", "notAfter": 9]],
                [
                    "resource": "b", "authorized": false,
                    "error": ["code": "authorization_denied_by_mvpd", "details": "why", "action": "retry"],
                ],
                ["resource": "c", "authorized": true, "notAfter": "5", "token": ["serializedToken": "U", "notAfter": 9]],
            ]
        ]
        guard let answer = DecisionsAnswer(body) else { return XCTFail("no decisions") }
        let rows: [(String, String?, Bool?, String?, Int64?, String?)] = [
            ("a", "a", true, "T", 9, nil),
            ("b", "b", false, nil, nil, "authorization_denied_by_mvpd"),
            ("c", "c", true, "U", 5, nil),
        ]
        for (asked, resource, authorized, token, notAfter, code) in rows {
            let decision = answer.decision(for: asked)
            XCTAssertEqual(decision?.resource, resource, asked)
            XCTAssertEqual(decision?.authorized, authorized, asked)
            XCTAssertEqual(decision?.mediaToken, token, asked)
            XCTAssertEqual(decision?.notAfter, notAfter, asked)
            XCTAssertEqual(decision?.error?.code, code, asked)
        }
        XCTAssertEqual(answer.decision(for: "a")?.source, "degradation")
        XCTAssertEqual(answer.decision(for: "b")?.error?.action, .retry)
        XCTAssertNil(DecisionsAnswer(["decisions": [:]]))
        XCTAssertNil(DecisionsAnswer(["decisions": []])?.decision(for: "a"))
        // A decision that names another resource is never taken (Protocol/README.md, "Authorization failures"): an
        // answer read out of step with its request gave one resource's permit to another. Before, a resource no
        // decision echoed got the first decision.
        XCTAssertNil(answer.decision(for: "unknown"))
        let other = DecisionsAnswer(["decisions": [["resource": "ch1", "authorized": true, "token": ["serializedToken": "T"]]]])
        XCTAssertNil(other?.decision(for: "ch2"))
        // Byte for byte: another normalization of "ché" is another resource to the backend (a breaking pass).
        let composed = DecisionsAnswer(["decisions": [["resource": "ch\u{E9}", "authorized": true, "token": ["serializedToken": "T"]]]])
        XCTAssertNil(composed?.decision(for: "che\u{301}"))
        XCTAssertEqual(composed?.decision(for: "ch\u{E9}")?.mediaToken, "T")
        XCTAssertEqual(Set(["ch\u{E9}", "che\u{301}", "ch\u{E9}"].map(ResourceID.init)).count, 2, "hashed by their bytes too")
        let unnamed = DecisionsAnswer(["decisions": [["authorized": true, "token": ["serializedToken": "T"]]]])
        XCTAssertEqual(unnamed?.decision(for: "ch2")?.mediaToken, "T")
        // From a breaking pass: a lone decision whose `resource` is not a string names something, not nothing.
        let numbered = DecisionsAnswer(["decisions": [["resource": 42, "authorized": true, "token": ["serializedToken": "T"]]]])
        XCTAssertNil(numbered?.decision(for: "ch2"))
    }

    /// What preauthorization takes from an answer (a breaking pass): the first decision of a resource, as the single
    /// decision does (a backend that answered deny then permit for ch2 was read as a permit here and a denial there),
    /// and no decision from one whose `authorized` is not a boolean (it was read as a denial without an error).
    func testPreauthorizationTakesTheFirstReadableDecisionOfEachResourceAsked() {
        let answer = DecisionsAnswer([
            "decisions": [
                ["resource": "ch2", "authorized": false], ["resource": "ch2", "authorized": true],
                ["resource": "ch3", "authorized": "true"], ["resource": "ch4", "authorized": true],
            ]
        ])
        let found = answer?.decisions(for: Set(["ch2", "ch3"].map(ResourceID.init)))
        XCTAssertEqual(found?.count, 1)
        XCTAssertEqual(found?[ResourceID("ch2")]?.authorized, false)
        XCTAssertEqual(answer?.decision(for: "ch2")?.authorized, false)
    }

    /// A permit that carries no media token cannot be used: Z500's "unreadable", not a denial (a breaking pass: it was
    /// "User not Authorized Error" + Z100).
    func testAPermitWithoutAMediaTokenIsUnreadable() {
        let body: JSON = ["decisions": [["resource": "ch1", "authorized": true]]]
        let outcome = DecisionOutcome(EndpointAnswer(result: .ok(body), value: DecisionsAnswer(body)), resource: "ch1")
        guard case .unreadable = outcome else { return XCTFail("\(outcome)") }
    }

    func testLogoutAnswersFindTheMVPDsEntry() {
        let body: JSON = ["logouts": ["A": ["actionName": "logout", "url": "/logout/A"], "B": ["actionName": "partner_logout"]]]
        let rows: [(String, String?, String?)] = [("A", "logout", "/logout/A"), ("B", "partner_logout", nil), ("Z", "logout", "/logout/A")]
        for (mvpd, action, url) in rows {
            let entry = LogoutAnswer(body)?.entry(for: mvpd)
            XCTAssertEqual(entry?.actionName, action, mvpd)
            XCTAssertEqual(entry?.url, url, mvpd)
        }
        XCTAssertNil(LogoutAnswer(["logouts": [:]])?.entry(for: "A"))
        XCTAssertNil(LogoutAnswer(.null)?.entry(for: "A"))
    }

    func testConfigurationAnswersListTheirMVPDs() {
        let rows: [(String, JSON, [String]?, String?)] = [
            (
                "under requestor",
                ["device": "tv", "requestor": ["mvpds": [["id": "A", "isTempPass": true], ["displayName": "no id"], ["id": "B"]]]],
                ["A", "B"], "tv"
            ),
            ("at the top level", ["requestor": [:], "mvpds": [["id": "C"]]], ["C"], nil),
            ("no requestor", ["mvpds": [["id": "C"]]], nil, nil),
        ]
        for (name, body, ids, device) in rows {
            let answer = ConfigurationAnswer(body)
            XCTAssertEqual(answer?.mvpds.map(\.ID), ids, name)
            XCTAssertEqual(answer?.device, device, name)
        }
        XCTAssertEqual(ConfigurationAnswer(rows[0].1)?.mvpds.first?.isTempPass, true)
        XCTAssertEqual(ConfigurationAnswer(rows[0].1)?.mvpds.first?.displayName, "A")
    }

    func testDCRAnswersAndErrorsRead() {
        let token = RESTV2.token(ClientCredentials(id: "c", secret: "s"))
        let rows: [(JSON, String?, Int64?, Int64?)] = [
            (["access_token": "AT", "expires_in": 60, "created_at": 1000], "AT", 60, 1000),
            (["access_token": "AT"], "AT", 3600, nil),
            (["token_type": "bearer"], nil, nil, nil),
        ]
        for (body, access, expiresIn, createdAt) in rows {
            let answer = token.answer(.ok(body)).value
            XCTAssertEqual(answer?.accessToken, access, "\(body)")
            XCTAssertEqual(answer?.expiresIn, expiresIn, "\(body)")
            XCTAssertEqual(answer?.createdAt, createdAt, "\(body)")
        }
        let register = RESTV2.register(softwareStatement: "s", redirectURL: "r")
        XCTAssertEqual(register.answer(.ok(["client_id": "c", "client_secret": "s"])).value, ClientCredentials(id: "c", secret: "s"))
        XCTAssertNil(register.answer(.ok(["client_id": "c"])).value)
        let errors: [(JSON?, Bool, Bool)] = [
            (["error": "invalid_client"], true, false),
            (["code": "invalid_client"], false, false),
            (["error": "invalid_software_statement"], false, true),
            (["code": "invalid_software_statement"], false, true),
            (nil, false, false),
        ]
        for (body, invalidClient, refused) in errors {
            XCTAssertEqual(RegistrationError(body).isInvalidClient, invalidClient, "\(String(describing: body))")
            XCTAssertEqual(RegistrationError(body).refusesSoftwareStatement, refused, "\(String(describing: body))")
        }
    }

    func testHeaderValuesEncodeThePartnerStatusAndTheTempPassIdentity() throws {
        let rows: [(String, String?, Int64?, JSON)] = [
            (
                "granted", "Acme", 1_700_000_000_000,
                [
                    "frameworkPermissionInfo": ["accessStatus": "granted"],
                    "frameworkProviderInfo": ["id": "Acme", "expirationDate": "1700000000000"],
                ]
            ),
            ("denied", nil, nil, ["frameworkPermissionInfo": ["accessStatus": "denied"], "frameworkProviderInfo": [:]]),
        ]
        for (access, provider, expiry, expected) in rows {
            let value = RESTV2.partnerFrameworkStatus(accessStatus: access, providerID: provider, expirationDate: expiry)
            let decoded = try JSON.parse([UInt8](try XCTUnwrap(Data(base64Encoded: value), access)))
            XCTAssertEqual(decoded, expected, access)
        }
        let identities: [(JSONObject?, [String])] = [
            (nil, []), ([:], []), (["email": "a@b.c"], ["AP-TempPass-Identity: eyJlbWFpbCI6ImFAYi5jIn0="]),
        ]
        for (data, expected) in identities {
            XCTAssertEqual(TempPassIdentity.headers(data).map { "\($0.0): \($0.1)" }, expected, "\(String(describing: data))")
        }
    }

    func testNumbersAndNumericStringsReadAsMillis() {
        let rows: [(JSON?, Int64?)] = [(1700, 1700), ("1700", 1700), ("soon", nil), (nil, nil), (true, nil)]
        for (value, expected) in rows {
            XCTAssertEqual(RESTV2.millis(value), expected, "\(String(describing: value))")
        }
    }
}
