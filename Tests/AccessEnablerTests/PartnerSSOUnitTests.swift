import Foundation
import JSON
import XCTest

@testable import AccessEnabler

/// The partner SSO wire details that need no backend (Adobe Pass REST API V2, "Partner Single Sign-On APIs"; Protocol/README.md).
final class PartnerSSOUnitTests: XCTestCase {
    func testSAMLResponseIsCollapsedTrimmedAndBase64Encoded() throws {
        let xml = "\n  <samlp:Response ID=\"_1\">\r\n\t<saml:Assertion>  a \t b</saml:Assertion>\n</samlp:Response>\n  "
        let encoded = Engine.encodeSAML(xml)
        let decoded = String(decoding: try XCTUnwrap(Data(base64Encoded: encoded)), as: UTF8.self)
        XCTAssertEqual(decoded, "<samlp:Response ID=\"_1\"> <saml:Assertion> a b</saml:Assertion></samlp:Response>")
        // The form body percent-encodes the base64 alphabet's `+`, `/` and `=` once.
        XCTAssertEqual(FormEncoding.encode([("SAMLResponse", "ab+/c=")]), "SAMLResponse=ab%2B%2Fc%3D")
    }

    func testFrameworkStatusHeaderCarriesTheHostsAnswers() throws {
        let metadata = PartnerAccountMetadata(providerId: "MockSSO", authenticationExpirationDate: 1_735_689_600_000)
        let header = PartnerAccount.header(access: .granted, metadata: metadata)
        let json = try JSON.parse([UInt8](try XCTUnwrap(Data(base64Encoded: header))))
        XCTAssertEqual(json["frameworkPermissionInfo"]?["accessStatus"], "granted")
        XCTAssertEqual(json["frameworkProviderInfo"]?["id"], "MockSSO")
        XCTAssertEqual(json["frameworkProviderInfo"]?["expirationDate"], "1735689600000", "a string of epoch milliseconds")

        let denied = try JSON.parse([UInt8](try XCTUnwrap(Data(base64Encoded: PartnerAccount.header(access: .denied, metadata: nil)))))
        XCTAssertEqual(denied["frameworkPermissionInfo"]?["accessStatus"], "denied")
        XCTAssertEqual(denied["frameworkProviderInfo"], .object(JSONObject()))
    }

    func testHostReasonsMapOntoTheCookbookCodes() {
        let interactive: [(PartnerSSOError.Reason, String)] = [
            (.accessNotGranted, "VSA403"), (.userCancelled, "N005"), (.unsupportedProvider, "N004"),
            (.serviceTemporarilyUnavailable, "VSA503"), (.providerRejected, "VSA503"), (.invalidVerificationToken, "VSA503"),
            (.other, "APPL_ERROR"),
        ]
        for (reason, id) in interactive {
            XCTAssertEqual(Engine.partnerStatus(PartnerSSOError(reason), interactive: true).id, id, "\(reason)")
        }
        // In the background (setRequestor, checkAuthentication) the cookbook names only VSA403/VSA404/APPL_ERROR.
        XCTAssertEqual(Engine.partnerStatus(PartnerSSOError(.accessNotGranted), interactive: false).id, "VSA403")
        XCTAssertEqual(Engine.partnerStatus(PartnerSSOError(.serviceTemporarilyUnavailable), interactive: false).id, "APPL_ERROR")
        XCTAssertEqual(PartnerSSOError(reasonName: nil).reason, .other)
        XCTAssertEqual(PartnerSSOError(reasonName: "somethingNew").reason, .other)
        XCTAssertEqual(PartnerSSOError(reasonName: "userCancelled").reason, .userCancelled)
    }

    func testAnswerAfterTheDeadlineCountsAsServiceTemporarilyUnavailable() async {
        let late = await PartnerCall.run(timeout: .milliseconds(50), on: ThreadExecutor.shared) { () async throws -> Int in
            try? await Task.sleep(for: .seconds(2))
            return 1
        }
        XCTAssertEqual(late, .failure(PartnerSSOError(.serviceTemporarilyUnavailable, message: "The platform did not answer in time")))
        let foreign = await PartnerCall.run(timeout: .seconds(5), on: ThreadExecutor.shared) { () async throws -> Int in
            throw CancellationError()
        }
        guard case .failure(let error) = foreign else { return XCTFail("expected a failure") }
        XCTAssertEqual(error.reason, .other)
        let quick = await PartnerCall.run(timeout: .seconds(5), on: ThreadExecutor.shared) { 7 }
        XCTAssertEqual(quick, .success(7))
    }
}
