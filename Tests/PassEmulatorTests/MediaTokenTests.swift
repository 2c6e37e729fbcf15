import Foundation
import XCTest

@testable import PassEmulator

final class MediaTokenTests: XCTestCase {
    static let key = RSAKey.generate()!

    private func token(resource: String = "ch1", issued: Int64 = 1_000_000) -> String {
        MediaToken(sessionGUID: "guid", requestorID: "REF", resourceID: resource, ttl: 420_000, issueTime: issued, mvpdId: "MockMVPD")
            .serialized(signedWith: Self.key)!
    }

    func testFreshTokenVerifiesAndKeepsItsFields() throws {
        let verified = try MediaToken.verify(token(), key: Self.key, nowMillis: 1_000_000 + 60_000, resource: "ch1")
        XCTAssertEqual(verified.resourceID, "ch1")
        XCTAssertEqual(verified.mvpdId, "MockMVPD")
        XCTAssertEqual(verified.requestorID, "REF")
        XCTAssertEqual(verified.ttl, 420_000)
    }

    func testSerializedTokenIsBase64OfTheShortTokenFormat() throws {
        let text = String(decoding: Data(base64Encoded: token())!, as: UTF8.self)
        XCTAssertTrue(text.hasPrefix("<signatureInfo>"))
        XCTAssertTrue(text.contains("<signatureInfo><shortAuthorizationToken><sessionGUID>guid</sessionGUID>"))
        XCTAssertTrue(text.hasSuffix("</shortAuthorizationToken>"))
    }

    func testExpiredTokenIsRejected() {
        XCTAssertThrowsError(try MediaToken.verify(token(), key: Self.key, nowMillis: 1_000_000 + 420_001, resource: nil)) { error in
            XCTAssertEqual(error as? MediaToken.Rejection, .expired(notAfter: 1_420_000, now: 1_420_001))
        }
    }

    func testWrongResourceIsRejected() {
        XCTAssertThrowsError(try MediaToken.verify(token(), key: Self.key, nowMillis: 1_000_000, resource: "ch2")) { error in
            XCTAssertEqual(error as? MediaToken.Rejection, .invalidResource(expected: "ch2", actual: "ch1"))
        }
    }

    func testTamperedTokenFailsTheSignature() {
        let text = String(decoding: Data(base64Encoded: token())!, as: UTF8.self).replacingOccurrences(of: ">ch1<", with: ">ch9<")
        let tampered = Data(text.utf8).base64EncodedString()
        XCTAssertThrowsError(try MediaToken.verify(tampered, key: Self.key, nowMillis: 1_000_000, resource: nil)) { error in
            XCTAssertEqual(error as? MediaToken.Rejection, .invalidSignature)
        }
    }

    func testAnotherKeyFailsTheSignature() {
        let other = RSAKey.publicKey(pem: RSAKey.generate()!.publicKeyPEM)!
        XCTAssertThrowsError(try MediaToken.verify(token(), key: other, nowMillis: 1_000_000, resource: nil)) { error in
            XCTAssertEqual(error as? MediaToken.Rejection, .invalidSignature)
        }
    }

    func testPublicKeyPEMRoundTripsAndVerifies() throws {
        let pem = Self.key.publicKeyPEM
        XCTAssertTrue(pem.hasPrefix("-----BEGIN PUBLIC KEY-----"))
        let publicKey = try XCTUnwrap(RSAKey.publicKey(pem: pem))
        XCTAssertFalse(publicKey.canSign)
        XCTAssertNoThrow(try MediaToken.verify(token(), key: publicKey, nowMillis: 1_000_000, resource: "ch1"))
    }

    func testMRSSTokenMatchesItsChannelTitleAndExactString() throws {
        let mrss = "<rss version=\"2.0\"><channel><title>ch&amp;1</title></channel></rss>"
        let serialized = token(resource: mrss)
        XCTAssertEqual(try MediaToken.verify(serialized, key: Self.key, nowMillis: 1_000_000, resource: mrss).resourceID, mrss)
        XCTAssertNoThrow(try MediaToken.verify(serialized, key: Self.key, nowMillis: 1_000_000, resource: "ch&1"))
    }

    func testGarbageIsAFormatError() {
        XCTAssertThrowsError(try MediaToken.verify("bm90IGEgdG9rZW4=", key: Self.key, nowMillis: 0, resource: nil)) { error in
            guard case .invalidFormat = error as? MediaToken.Rejection else { return XCTFail("\(error)") }
        }
    }
}
