import Foundation
import JSON
import Synchronization
import XCTest

@testable import AccessEnabler

final class RedirectURLTests: XCTestCase {
    func testMatchesSchemeHostAndPathIgnoringQueryAndFragment() {
        XCTAssertTrue(RedirectURL.matches("adobepass://ios.app", registered: "adobepass://ios.app"))
        XCTAssertTrue(RedirectURL.matches("adobepass://ios.app/?code=1#x", registered: "adobepass://ios.app"))
        XCTAssertTrue(RedirectURL.matches("ADOBEPASS://IOS.APP", registered: "adobepass://ios.app"))
        XCTAssertTrue(RedirectURL.matches("https://app.example/done?x=1", registered: "https://app.example/done"))
        // Whatever the query and fragment hold, as a page may leave them (a space, `|`, a lone `%`, non-ASCII).
        for tail in ["?msg=hello world", "?a=b|c", "?x=%", "?n=é", "?x=[1]", "#a#b", "#%zz", "?code=abc%2"] {
            XCTAssertTrue(RedirectURL.matches("adobepass://ios.app" + tail, registered: "adobepass://ios.app"), tail)
        }
        XCTAssertTrue(RedirectURL.isValid("adobepass://ios.app?a=b|c"))
        XCTAssertTrue(RedirectURL.isValid("myapp://done/é"))
        XCTAssertFalse(RedirectURL.isValid("myapp://done/a b"))
    }

    func testComparesPathsAfterPercentEncodingNormalization() {
        XCTAssertTrue(RedirectURL.matches("https://app.example/done%2fhere", registered: "https://app.example/done%2Fhere"))
        XCTAssertTrue(RedirectURL.matches("https://app.example/d%6Fne", registered: "https://app.example/done"))
        XCTAssertTrue(RedirectURL.matches("https://app.example/a%7eb", registered: "https://app.example/a~b"))
        XCTAssertFalse(RedirectURL.matches("https://app.example/done%2Fhere", registered: "https://app.example/done/here"))
        XCTAssertFalse(RedirectURL.matches("https://app.example/done%2", registered: "https://app.example/done%20"))
    }

    func testRejectsOtherURLs() {
        XCTAssertFalse(RedirectURL.matches("adobepass://android.app", registered: "adobepass://ios.app"))
        XCTAssertFalse(RedirectURL.matches("https://ios.app", registered: "adobepass://ios.app"))
        XCTAssertFalse(RedirectURL.matches("adobepass://ios.app/other", registered: "adobepass://ios.app"))
        XCTAssertFalse(RedirectURL.matches("not a url", registered: "adobepass://ios.app"))
        XCTAssertFalse(RedirectURL.matches("", registered: "adobepass://ios.app"))
    }

    func testHandleExternalURLThrowsForAForeignURL() async throws {
        let delegate = RecordingDelegate()
        let engine = Engine(
            configuration: AccessEnablerConfiguration(backendURL: try BackendURL("http://127.0.0.1:1"), softwareStatement: nil),
            store: try TokenStore(directory: temporaryDirectory()), delegate: delegate)
        do {
            _ = try await engine.handleExternalURL("https://evil.example/")
            XCTFail("accepted a foreign URL")
        } catch {
            XCTAssertEqual(error, .invalidRedirectURL("https://evil.example/"))
        }
        XCTAssertEqual(delegate.callbacks, [])
    }
}

final class ClockTests: XCTestCase {
    func testSkewFromDateHeaderCorrectsTheClock() {
        let local = Date(timeIntervalSince1970: 1_800_000_000)
        let clock = SkewedClock(local: { local }, elapsed: { 0 })
        XCTAssertFalse(clock.observe(dateHeader: DateHeader.format(local.addingTimeInterval(120))))
        XCTAssertEqual(clock.now().timeIntervalSince1970, local.timeIntervalSince1970 + 120, accuracy: 0.001)
        XCTAssertEqual(clock.nowMillis(), 1_800_000_120_000)
    }

    func testWarnsOnceWhenSkewExceedsFiveMinutes() {
        let local = Date(timeIntervalSince1970: 1_800_000_000)
        let clock = SkewedClock(local: { local }, elapsed: { 0 })
        XCTAssertTrue(clock.observe(dateHeader: DateHeader.format(local.addingTimeInterval(86_400))))
        XCTAssertFalse(clock.observe(dateHeader: DateHeader.format(local.addingTimeInterval(86_400))))
        XCTAssertEqual(clock.now().timeIntervalSince1970, local.timeIntervalSince1970 + 86_400, accuracy: 0.001)
        XCTAssertFalse(clock.observe(dateHeader: DateHeader.format(local)))
        XCTAssertTrue(clock.observe(dateHeader: DateHeader.format(local.addingTimeInterval(-400))))
    }

    /// A step of the wall clock after the backend answered (a box booted at 1970, then set by NTP) moves
    /// nothing: the backend's time is carried forward by the time elapsed since boot.
    func testAWallClockStepDoesNotMoveTheBackendTime() {
        let wall = Mutex(Date(timeIntervalSince1970: 0))
        let elapsed = Mutex<TimeInterval>(100)
        let clock = SkewedClock(local: { wall.withLock { $0 } }, elapsed: { elapsed.withLock { $0 } })
        let server = Date(timeIntervalSince1970: 1_800_000_000)
        XCTAssertTrue(clock.observe(dateHeader: DateHeader.format(server)))
        wall.withLock { $0 = Date(timeIntervalSince1970: 1_800_000_000 - 90 * 86_400) }  // NTP steps, wrongly
        elapsed.withLock { $0 = 160 }
        XCTAssertEqual(clock.now().timeIntervalSince1970, 1_800_000_060, accuracy: 0.001)
        wall.withLock { $0 = Date(timeIntervalSince1970: 0) }  // and back
        XCTAssertEqual(clock.nowMillis(), 1_800_000_060_000)
    }

    func testIgnoresUnreadableDates() {
        let local = Date(timeIntervalSince1970: 1_800_000_000)
        let clock = SkewedClock(local: { local }, elapsed: { 0 })
        XCTAssertFalse(clock.observe(dateHeader: "yesterday"))
        XCTAssertEqual(clock.now(), local)
    }

    func testTrimmingWhitespaceDropsBothEndsOnly() {
        XCTAssertEqual(" \tapplication/json; charset=utf-8 \r\n".trimmingWhitespace(), "application/json; charset=utf-8")
        XCTAssertEqual("a b".trimmingWhitespace(), "a b")
        XCTAssertEqual(" \r\n".trimmingWhitespace(), "")
        XCTAssertEqual("".trimmingWhitespace(), "")
    }

    func testParsesRFC1123() {
        XCTAssertEqual(DateHeader.parse("Sun, 06 Nov 1994 08:49:37 GMT")?.timeIntervalSince1970, 784_111_777)
    }
}

final class HeaderTests: XCTestCase {
    func testDeviceIdentifierIsFingerprintOfBase64DeviceId() {
        XCTAssertEqual(
            DeviceInfo.deviceIdentifierHeader("ba23d141-d715-561c-94f4-e9e4c966b1eb"),
            "fingerprint YmEyM2QxNDEtZDcxNS01NjFjLTk0ZjQtZTllNGM5NjZiMWVi")
    }

    func testComputedDeviceInfoHasTheRequiredKeys() throws {
        let value = DeviceInfo.computed(secondScreen: true)
        let decoded = try XCTUnwrap(Data(base64Encoded: value))
        let json = try JSON.parse([UInt8](decoded))
        for key in ["model", "version", "osName", "osVersion", "connectionType"] {
            XCTAssertNotNil(json[key]?.stringValue, key)
        }
        XCTAssertEqual(json["osName"], "Linux")
        XCTAssertEqual(json["primaryHardwareType"], "SetTopBox")
    }

    func testFormEncodingEscapesReservedAndNonASCII() {
        XCTAssertEqual(
            FormEncoding.encode([("redirectUrl", "adobepass://ios.app"), ("r", "a&b=c é")]),
            "redirectUrl=adobepass%3A%2F%2Fios.app&r=a%26b%3Dc%20%C3%A9")
    }

    func testOnlyHTTPSOrLoopbackBackends() {
        for allowed in [
            "https://sp.auth.adobe.com", "HTTPS://sp.auth.adobe.com/", "http://127.0.0.1:8080", "http://127.0.0.2:8080",
            "http://localhost:8080", "http://[::1]:8080", "https://sp.example:443/base",
        ] {
            XCTAssertEqual((try? BackendURL(allowed))?.text, allowed)
        }
        func refusal(_ text: String) -> BackendURL.Refusal? {
            do throws(BackendURL.Refusal) {
                _ = try BackendURL(text)
                return nil
            } catch {
                return error
            }
        }
        XCTAssertEqual(refusal("http://sp.auth.adobe.com"), .plainHTTP)
        XCTAssertEqual(refusal("http://127.example.com"), .plainHTTP)
        XCTAssertEqual(refusal("ftp://127.0.0.1"), .scheme)
        for malformed in [
            "", "sp.auth.adobe.com", "https:sp.example", "https://", "https:///path", "https://a b", "https://a:8x",
        ] {
            XCTAssertEqual(refusal(malformed), .notAbsolute, malformed)
        }
        for port in ["https://a:65536", "http://127.0.0.1:99999", "https://a:0", "https://a:99999999999999999999"] {
            XCTAssertEqual(refusal(port), .port, port)
        }
        for extra in ["https://sp.example?x=1", "https://sp.example/#f", "http://u:p@127.0.0.1:8080", "https://u@sp.example"] {
            XCTAssertEqual(refusal(extra), .notBase, extra)
        }
        XCTAssertNil(refusal("https://sp.example:65535/base/"))
        XCTAssertTrue(BackendURL.isLoopback("LocalHost"))
        XCTAssertTrue(BackendURL.isLoopback("[::1]"))
        XCTAssertFalse(BackendURL.isLoopback("127.0.0"))
        XCTAssertFalse(BackendURL.isLoopback("127.0.0.256"))
        XCTAssertFalse(BackendURL.isLoopback("[]"))
    }

    func testOptionsApplyKnownKeys() {
        var options = Options()
        options.apply(["visitorID": "ECID-1", "device_info": "eyJ9", "handleSVC": true, "other": 1])
        XCTAssertEqual(options.visitorID, "ECID-1")
        XCTAssertEqual(options.deviceInfo, "eyJ9")
        XCTAssertTrue(options.handleSVC)
    }

    func testProfileTrackingGUIDIsMD5OfUserID() throws {
        let json = try JSON.parse(
            #"{"notAfter":1,"issuer":"MockMVPD","type":"regular","attributes":{"userID":{"value":"u1","state":"plain"},"zip":{"value":"x","state":"enc"}}}"#
        )
        let profile = Profile(mvpd: "MockMVPD", json: json)
        XCTAssertEqual(profile.trackingGUID, Hash.md5Hex("u1"))
        XCTAssertEqual(Hash.md5Hex("abc"), "900150983cd24fb0d6963f7d28e17f72")
        XCTAssertEqual(Hash.sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(profile.attribute("zip")?.encrypted, true)
        XCTAssertEqual(profile.attribute("userID")?.value, "u1")
    }
}

final class OfflineEngineTests: XCTestCase {
    func testNoSoftwareStatementEndsSetRequestorWithR400AndFailsQueuedCalls() async throws {
        let delegate = RecordingDelegate()
        let engine = Engine(
            configuration: AccessEnablerConfiguration(backendURL: try BackendURL("http://127.0.0.1:1"), softwareStatement: nil),
            store: try TokenStore(directory: temporaryDirectory()), delegate: delegate)
        let status = await engine.setRequestor("REF", serviceProviders: nil)
        XCTAssertEqual(status.status, 0)
        let callbacks = delegate.take()
        XCTAssertEqual(callbacks.count, 2)
        XCTAssertEqual(callbacks.first, .setRequestorComplete(0))
        guard case .status(let advanced) = callbacks.last else { return XCTFail("no status") }
        XCTAssertEqual(advanced.id, "R400")
        XCTAssertEqual(advanced.level, "error")

        let check = await engine.checkAuthentication()
        // Calls after the failed setRequestor carry its reasons (Protocol/README.md "Failure reasons").
        XCTAssertEqual(check, AuthenticationStatus(status: 0, errorCode: "Generic Authentication Error", statuses: [advanced]))
        XCTAssertEqual(delegate.take(), [.setAuthenticationStatus(0, "Generic Authentication Error")])
        let authz = await engine.checkAuthorization("ch1", data: nil)
        XCTAssertEqual(
            authz, .failed(resource: "ch1", errorCode: "Generic Authorization Error", errorDescription: "", statuses: [advanced]))
        XCTAssertEqual(delegate.take(), [.tokenRequestFailed("ch1", "Generic Authorization Error", "")])
    }

    func testUnreachableBackendReportsCFG404() async throws {
        let delegate = RecordingDelegate()
        let engine = Engine(
            configuration: AccessEnablerConfiguration(
                backendURL: try BackendURL("http://127.0.0.1:1"), softwareStatement: "a.b.c", requestTimeout: .seconds(5)),
            store: try TokenStore(directory: temporaryDirectory()), delegate: delegate)
        let status = await engine.setRequestor("REF", serviceProviders: nil)
        XCTAssertEqual(status.status, 0)
        let callbacks = delegate.take()
        XCTAssertEqual(callbacks.count, 2)
        XCTAssertEqual(callbacks.first, .setRequestorComplete(0))
        guard case .status(let advanced) = callbacks.last else { return XCTFail("no status") }
        XCTAssertEqual(advanced.id, "CFG404")
        let resources = await engine.checkPreauthorizedResources(["ch1"], cache: true).resources
        XCTAssertEqual(resources, [])
        XCTAssertEqual(delegate.take(), [.preauthorizedResources([])])
    }

    func testDeviceIdIsPersistedAndReportedAsMetadata() async throws {
        let directory = temporaryDirectory()
        let config = AccessEnablerConfiguration(backendURL: try BackendURL("http://127.0.0.1:1"), softwareStatement: nil)
        let first = Engine(configuration: config, store: try TokenStore(directory: directory), delegate: RecordingDelegate())
        let delegate = RecordingDelegate()
        let second = Engine(configuration: config, store: try TokenStore(directory: directory), delegate: delegate)
        let a = await first.getMetadata(.deviceID, arguments: ["opCode": 2])
        let b = await second.getMetadata(.deviceID, arguments: ["opCode": 2])
        XCTAssertEqual(a.metadata, b.metadata)
        XCTAssertNotNil(a.metadata.stringValue)
        XCTAssertEqual(delegate.callbacks, [.setMetadataStatus(b.metadata, false, 2, ["opCode": 2])])
    }

    func testSelectingWithoutRequestorEndsWithProviderNotSelected() async throws {
        let delegate = RecordingDelegate()
        let engine = Engine(
            configuration: AccessEnablerConfiguration(backendURL: try BackendURL("http://127.0.0.1:1"), softwareStatement: nil),
            store: try TokenStore(directory: temporaryDirectory()), delegate: delegate)
        let outcome = await engine.setSelectedProvider(nil)
        XCTAssertEqual(outcome, .ended(AuthenticationStatus(status: 0, errorCode: "Provider not Selected Error")))
        let callbacks = delegate.take()
        XCTAssertEqual(callbacks.first, .setAuthenticationStatus(0, "Provider not Selected Error"))
        XCTAssertEqual(engine.getSelectedProvider(), nil)
        XCTAssertEqual(delegate.take(), [.selectedProvider(nil)])
    }
}

/// The URL splitter (RFC 3986, section 3), base64 through libcrypto, the device UUID and the redacted PostgreSQL URL.
final class TextFormatTests: XCTestCase {
    func testAbsoluteURLSplitsTheGenericSyntax() throws {
        let url = try XCTUnwrap(AbsoluteURL("HTTPS://me:pw@Sp.Example:8443/a/%7Eb;c?x=1&y=%2F#top"))
        XCTAssertEqual(url.scheme, "https")
        XCTAssertEqual(url.userinfo, "me:pw")
        XCTAssertEqual(url.host, "Sp.Example")
        XCTAssertEqual(url.port, "8443")
        XCTAssertEqual(url.path, "/a/%7Eb;c")
        XCTAssertEqual(url.query, "x=1&y=%2F")
        XCTAssertEqual(url.fragment, "top")
        let literal = try XCTUnwrap(AbsoluteURL("http://[::1]:80"))
        XCTAssertEqual([literal.host, literal.port, literal.path], ["[::1]", "80", ""])
        let app = try XCTUnwrap(AbsoluteURL("adobepass://ios.app"))
        XCTAssertEqual([app.scheme, app.host, app.path], ["adobepass", "ios.app", ""])
        XCTAssertNil(app.query)
        XCTAssertEqual(AbsoluteURL("postgresql:///db?host=/run/postgresql")?.host, "")
    }

    func testAbsoluteURLRefusesWhatRFC3986DoesNotAllow() {
        for text in [
            "", "//host/path", "1http://host", "ht tp://host", "mailto:someone@example.com", "https://a b/", "https://host/a b",
            "https://host/\u{7F}", "https://hóst/", "https://ho%zz/", "https://ho[st/", "https://[::1/", "https://[::1]x/",
            "https://[]/", "https://[1.2]/", "https://host:80a/", "https://host/?q=a b", "https://host/#\t",
        ] {
            XCTAssertNil(AbsoluteURL(text), text)
        }
        // Past the authority anything but space and controls is taken; isStrict says whether RFC 3986 would.
        for text in ["https://host/%zz", "https://host/%4", "https://host/<script>", "https://host/a#b#c", "https://host/é", "a://h?a=b|c"]
        {
            XCTAssertEqual(AbsoluteURL(text)?.isStrict, false, text)
        }
        XCTAssertEqual(AbsoluteURL("https://host/a%20b?x=%2F#top")?.isStrict, true)
    }

    func testBase64MatchesRFC4648sVectors() {
        let vectors = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors {
            XCTAssertEqual(Base64.encode(plain.utf8), encoded)
            XCTAssertEqual(Base64.decode(encoded), Array(plain.utf8), encoded)
        }
        XCTAssertEqual(Base64.decode("/+8="), [0xFF, 0xEF])
        for bad in ["Zg", "Zg=", "Z===", "Zm9v\n", " Zm9v", "Zm=v", "Zm9*", "-_8="] {
            XCTAssertNil(Base64.decode(bad), bad)
        }
    }

    func testTheDeviceUUIDIsARandomVersion4UUID() {
        let ids = (0..<64).map { _ in TokenStore.randomUUID() }
        XCTAssertEqual(Set(ids).count, ids.count)
        for id in ids {
            let groups = id.split(separator: "-", omittingEmptySubsequences: false)
            XCTAssertEqual(groups.map(\.count), [8, 4, 4, 4, 12], id)
            XCTAssertTrue(id.allSatisfy { "0123456789abcdef-".contains($0) }, id)
            XCTAssertEqual(groups[2].first, "4", id)
            XCTAssertTrue("89ab".contains(groups[3].first!), id)
        }
    }

    func testHeaderValuesRefuseEveryControlCharacterButTabWherever() {
        for length in [1, 7, 8, 9, 16, 17, 40] {
            for position in 0..<length {
                for byte in [0x00, 0x09, 0x0A, 0x0D, 0x1F, 0x20, 0x7E, 0x7F, 0x80, 0xC3] as [UInt8] {
                    var bytes = Array(repeating: UInt8(ascii: "v"), count: length)
                    bytes[position] = byte
                    let text = String(decoding: bytes, as: UTF8.self)
                    let expected = text.utf8.allSatisfy { $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }
                    XCTAssertEqual(HeaderValue.isSafe(text), expected, "\(byte) at \(position) of \(length)")
                }
            }
        }
        XCTAssertTrue(HeaderValue.isSafe(""))
    }

    func testPostgreSQLURLsAreShownWithoutTheirPasswords() {
        XCTAssertEqual(PostgreSQLURL.redacted("postgresql://fleet:s3cret@db:5432/passbridge"), "postgresql://fleet:***@db:5432/passbridge")
        XCTAssertEqual(
            PostgreSQLURL.redacted("postgresql:///passbridge?host=/run/postgresql&password=s3cret"),
            "postgresql:///passbridge?host=/run/postgresql&password=***")
        XCTAssertEqual(PostgreSQLURL.redacted("postgresql://fleet@db/passbridge"), "postgresql://fleet@db/passbridge")
        // libpq's userinfo runs to the first `@` before any `/`: not host `fleet`, port 98765.
        XCTAssertEqual(PostgreSQLURL.redacted("postgresql://fleet:98765?x#y@db/passbridge"), "postgresql://fleet:***@db/passbridge")
        XCTAssertEqual(
            PostgreSQLURL.redacted("postgresql://a@h:1/db?%70assword=S3CRET&sslpassword=K3Y&sslmode=require"),
            "postgresql://a@h:1/db?%70assword=***&sslpassword=***&sslmode=require")
        XCTAssertEqual(PostgreSQLURL.redacted("postgresql://fleet:pw@a b/x"), "postgresql://…")
        // libpq's password ends at `@`: `2024` is no port, `#Winter` no fragment.
        XCTAssertFalse(PostgreSQLURL.redacted("postgresql://pb:2024#Winter@127.0.0.1:1/pb").contains("2024"))
        // libpq knows no fragment: `#frag` is the end of the password's value.
        XCTAssertEqual(PostgreSQLURL.redacted("postgresql://db/x?password=X#frag&a=1"), "postgresql://db/x?password=***&a=1")
        XCTAssertEqual(PostgreSQLURL.redacted("postgresql://db/x#frag"), "postgresql://db/x#frag")
        // An unencoded `/` in the password: libpq reads `pb` as the host, the user meant a password.
        XCTAssertEqual(PostgreSQLURL.redacted("postgresql://pb:1234/5678@db/x"), "postgresql://pb:***@db/x")
        // An encoded `=`: libpq refuses the item, quoting it.
        XCTAssertEqual(PostgreSQLURL.redacted("postgresql://db/x?password%3DS3CRET&a=1"), "postgresql://db/x?***&a=1")
    }

    func testAConnectTimeoutIsGivenWhenNoneIs() {
        let given = PostgreSQLURL.defaultConnectTimeout
        XCTAssertEqual(given, 10)
        for (url, expected) in [
            ("postgresql://db/x", "postgresql://db/x?connect_timeout=10"),
            ("postgresql://db/x?", "postgresql://db/x?connect_timeout=10"),
            ("postgresql://db/x?sslmode=require", "postgresql://db/x?sslmode=require&connect_timeout=10"),
            ("postgresql://db/x?sslmode=require&", "postgresql://db/x?sslmode=require&connect_timeout=10"),
            ("postgresql://db/x?connect_timeout=3", "postgresql://db/x?connect_timeout=3"),
            ("postgresql://db/x?a=1&%63onnect_timeout=0", "postgresql://db/x?a=1&%63onnect_timeout=0"),
            // A `?` in the password does not start the query (libpq ends the userinfo at its first `@`).
            ("postgresql://u:Sec?ret@db/x", "postgresql://u:Sec?ret@db/x?connect_timeout=10"),
            ("postgresql://u:Sec?ret@db/x?connect_timeout=1", "postgresql://u:Sec?ret@db/x?connect_timeout=1"),
        ] {
            XCTAssertEqual(PostgreSQLURL.withConnectTimeout(url, environment: nil), expected)
            XCTAssertEqual(PostgreSQLURL.withConnectTimeout(url, environment: "2"), url)
        }
    }

    func testLibpqsMessagesLoseTheURLsSecrets() {
        let url = "postgresql://fleet:p%40ss@word@[::1/db?%70assword=two&sslpassword=&x=password"
        XCTAssertEqual(
            PostgreSQLURL.scrubbed("bad URI: \"\(url)\"; p@ss and two again; password stays", of: url),
            "bad URI: \"postgresql://fleet:***@[::1/db?%70assword=***&sslpassword=&x=password\"; *** and *** again; password stays")
        XCTAssertEqual(PostgreSQLURL.scrubbed("no secret here", of: "postgresql://db/x"), "no secret here")
        XCTAssertEqual(PostgreSQLURL.scrubbed("fleet", of: "postgresql://fleet@db/x"), "fleet")
        // A piece of a password libpq split, quoted as a port; a piece shorter than 3 characters is left alone.
        XCTAssertEqual(
            PostgreSQLURL.scrubbed("invalid integer value \"abcd\" for option \"port\"", of: "postgresql://u:abcd/efgh@db:1/x"),
            "invalid integer value \"***\" for option \"port\"")
        XCTAssertEqual(PostgreSQLURL.scrubbed("host \"ab@db\"", of: "postgresql://u:x@ab@db/x"), "host \"ab@db\"")
        for url in [
            "postgresql://db/x?password=X9#frag", "postgresql://pb:1234/5678@db/x", "postgresql://db/x?password%3DX9",
            "postgresql://u:S?x9@db/x?password=frag",
        ] {
            let scrubbed = PostgreSQLURL.scrubbed("bad URI: \"\(url)\"", of: url)
            XCTAssertFalse(scrubbed.contains("X9") || scrubbed.contains("frag") || scrubbed.contains("5678"), scrubbed)
        }
    }
}

/// `Requestor.own`: which stored profiles are the requestor's, found from the stored entries alone.
final class RequestorProfilesTests: XCTestCase {
    func client(_ base: String, _ store: TokenStore) throws -> RestClient {
        RestClient(
            baseURL: try BackendURL(base), softwareStatement: "h.p.s", redirectURL: "adobepass://ios.app", store: store,
            clock: SkewedClock(local: { Date() }), transport: HTTPTransport(), timeout: .seconds(5), maxThrottleRetries: 2,
            headers: { DeviceHeaders(deviceIdentifier: "d", deviceInfo: "e30=", visitorID: nil) })
    }

    func answer(_ mvpds: [String]) throws -> ConfigurationAnswer {
        try XCTUnwrap(ConfigurationAnswer(["requestor": ["mvpds": .array(mvpds.map { ["id": .string($0), "displayName": .string($0)] })]]))
    }

    /// Two service providers (two scopes). A profile counts under the scope its MVPD was paired with (the first provider
    /// to list it), for an MVPD the requestor lists; results keep the requestor's MVPD order, whatever the store's.
    func testKeepsListedMVPDsUnderTheirOwnScopeInTheRequestorsOrder() throws {
        let store = try TokenStore(directory: temporaryDirectory())
        let first = try client("http://127.0.0.1:1", store)
        let second = try client("http://127.0.0.1:2", store)
        var requestor = Requestor(id: "REF", primary: first)
        requestor.merge(configuration: try answer((0..<200).map { "Cable\($0)" } + ["Shared"]), from: first)
        requestor.merge(configuration: try answer(["Shared", "Only2"]), from: second)
        XCTAssertEqual(requestor.scopes, [first.scope, second.scope])
        let logins = requestor.logins(device: "dev")
        let one = LoginKey(scope: first.scope, device: "dev", requestor: "REF")
        let two = LoginKey(scope: second.scope, device: "dev", requestor: "REF")
        XCTAssertEqual(logins, [one, two])
        let stored: [LoginKey: [String: Int]] = [
            one: ["Cable199": 1, "Cable3": 2, "Shared": 3, "Gone": 4, "Only2": 5],
            two: ["Only2": 6, "Shared": 7, "Cable5": 8],
        ]
        let own = requestor.own(stored)
        XCTAssertEqual(own.map(\.0.mvpd), ["Cable3", "Cable199", "Shared", "Only2"])
        XCTAssertEqual(own.map(\.1), [2, 1, 3, 6])
        XCTAssertEqual(own.map(\.0.login), [one, one, one, two])
        XCTAssertTrue(requestor.own([LoginKey: [String: Int]]()).isEmpty)
    }
}
