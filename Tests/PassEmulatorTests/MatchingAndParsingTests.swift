import JSON
import XCTest

@testable import PassEmulator

final class MatchingAndParsingTests: XCTestCase {
    func testPlainResourceIsItsOwnId() {
        XCTAssertEqual(ResourceMatcher.id(of: "ch1"), "ch1")
    }

    func testMRSSMatchesTheChannelTitleWithEntitiesDecoded() {
        let mrss =
            "<rss version=\"2.0\" xmlns:media=\"http://search.yahoo.com/mrss/\"><channel><title>A &amp; B &#38; &#x43;</title>"
            + "<item><title>Episode</title></item></channel></rss>"
        XCTAssertEqual(ResourceMatcher.id(of: mrss), "A & B & C")
    }

    func testMalformedMRSSIsToldApartFromWellFormedMRSSAndPlainIds() {
        let malformed = [
            "<rss version=\"2.0\"><channel><title>Law & Order: \"SVU\" <Pilot></title></channel></rss>",
            "<rss><channel><title>ch1</title></channel>", "<rss>", "<a></a><b/>", "<a>x</b>", "<a b=c/>", "<a>&foo;</a>",
            "<a>x</a> trailing", "< a/>", "<a><b></a></b>",
        ]
        for resource in malformed { XCTAssertTrue(MRSS.isMalformed(resource), resource) }
        let accepted = [
            "ch1", "Law & Order: \"SVU\" <Pilot>", "<a>&amp;&#38;&lt;</a>", "  <?xml version=\"1.0\"?><a/>\n",
            "<rss xmlns:media=\"http://search.yahoo.com/mrss/\"><channel><title><![CDATA[A & <B>]]></title>"
                + "<media:rating scheme=\"urn:mpaa\">pg</media:rating></channel></rss>",
        ]
        for resource in accepted { XCTAssertFalse(MRSS.isMalformed(resource), resource) }
    }

    func testMRSSTitleInCDATAIsTakenLiterally() {
        XCTAssertEqual(ResourceMatcher.id(of: "<rss><channel><title><![CDATA[ch1]]></title></channel></rss>"), "ch1")
        XCTAssertEqual(
            ResourceMatcher.id(of: "<rss><channel><title>A &amp; <![CDATA[B &amp; C]]></title></channel></rss>"), "A & B &amp; C")
    }

    func testMRSSWithoutChannelStaysAsSent() {
        XCTAssertEqual(ResourceMatcher.id(of: "<rss><item><title>x</title></item></rss>"), "<rss><item><title>x</title></item></rss>")
    }

    func testXMLEscapeAndUnescapeRoundTrip() {
        let text = "a<b>&\"c'"
        XCTAssertEqual(XML.unescape(XML.escape(text)), text)
        XCTAssertEqual(XML.unescape("&unknown; &amp"), "&unknown; &amp")
    }

    func testFormDecodingHandlesPlusAndPercent() {
        XCTAssertEqual(
            FormCoding.decode("a=1+2&redirectUrl=adobepass%3A%2F%2Fios.app&e="),
            ["a": "1 2", "redirectUrl": "adobepass://ios.app", "e": ""])
        XCTAssertEqual(FormCoding.escape("a b/é"), "a%20b%2F%C3%A9")
    }

    func testHTTPDateIsRFC1123() {
        XCTAssertEqual(HTTPDate.format(millis: 784_111_777_000), "Sun, 06 Nov 1994 08:49:37 GMT")
    }

    func testDeviceIdentifierNeedsFingerprintAndBase64() {
        XCTAssertEqual(Emulator.deviceIdentifier("fingerprint YWJj"), "YWJj")
        XCTAssertNil(Emulator.deviceIdentifier("YWJj"))
        XCTAssertNil(Emulator.deviceIdentifier("fingerprint %%%"))
    }

    func testSoftwareStatementMustBeAThreePartJWT() {
        XCTAssertTrue(Emulator.isWellFormedJWT("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"))
        XCTAssertFalse(Emulator.isWellFormedJWT("a.b"))
        XCTAssertFalse(Emulator.isWellFormedJWT("bm90IGpzb24.eyJzdWIiOiJ4In0.c2ln"))
    }

    func testPartnerStatusRules() throws {
        let sp = try EmulatorConfig.builtIn().serviceProvider("REF")!
        func status(_ access: String, _ id: String = "MockSSO", _ expiry: String = "4102444800000") -> PartnerFrameworkStatus {
            let json =
                "{\"frameworkPermissionInfo\":{\"accessStatus\":\"\(access)\"},\"frameworkProviderInfo\":{\"id\":\"\(id)\",\"expirationDate\":\"\(expiry)\"}}"
            return PartnerFrameworkStatus(header: Base64.encode(json))!
        }
        func code(_ value: PartnerFrameworkStatus) -> String? {
            do { _ = try value.validate(sp, now: 1_000); return nil } catch { return error.response.json["code"]?.stringValue }
        }
        XCTAssertNil(code(status("granted")))
        XCTAssertEqual(try status("granted").validate(sp, now: 1_000).id, "MockSSO")
        XCTAssertEqual(code(status("denied")), "invalid_header_pfs_permission_access_not_granted")
        XCTAssertEqual(code(status("notDetermined")), "invalid_header_pfs_permission_access_not_determined")
        XCTAssertEqual(code(status("granted", "Other")), "invalid_header_pfs_provider_id_not_determined")
        XCTAssertEqual(code(status("granted", "MockSSO", "999")), "invalid_header_pfs_provider_info_expired")
        XCTAssertEqual(code(PartnerFrameworkStatus(header: "???")!), "invalid_header_pfs_permission_access_not_present")
        XCTAssertNil(PartnerFrameworkStatus(header: nil))
    }
}

extension HTTPResponse {
    /// The body parsed as JSON (tests only).
    var json: JSON { (try? JSON.parse(body)) ?? .null }
}
