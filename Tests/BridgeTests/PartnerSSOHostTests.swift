import AccessEnabler
import JSON
import JSONRPC
import Synchronization
import XCTest

@testable import Bridge

/// `PartnerSSOHost`: the params it sends and how it reads the host's answers (Protocol/README.md).
final class PartnerSSOHostTests: XCTestCase {
    /// Answers every request with a fixed outcome and records what was asked.
    final class FakeHost: HostRequester {
        let answer: Result<JSON, RequestFailure>
        let asked = Mutex<[(String, JSON, Duration)]>([])
        init(_ answer: Result<JSON, RequestFailure>) { self.answer = answer }
        func request(
            method: String, params: JSON, timeout: Duration, completion: @escaping @Sendable (Result<JSON, RequestFailure>) -> Void
        ) {
            asked.withLock { $0.append((method, params, timeout)) }
            completion(answer)
        }
    }

    func testRequestsCarryTheDocumentedParams() async throws {
        let fake = FakeHost(
            .success(["providerId": "MockSSO", "authenticationExpirationDate": 1_900_000_000_000, "samlAttributeQueryResponse": "<x/>"]))
        let host = PartnerSSOHost(partner: "Apple", requester: fake)
        let metadata = try await host.requestAccountMetadata(
            PartnerAccountMetadataRequest(
                interruptionAllowed: true, verificationToken: "dG9rZW4=", attributeNames: ["uid"], supportedProviderIds: ["MockSSO"],
                featuredProviderIds: []))
        XCTAssertEqual(
            metadata,
            PartnerAccountMetadata(
                providerId: "MockSSO", authenticationExpirationDate: 1_900_000_000_000, samlAttributeQueryResponse: "<x/>"))
        let asked = try XCTUnwrap(fake.asked.withLock { $0.first })
        XCTAssertEqual(asked.0, "partnerSSO/requestAccountMetadata")
        XCTAssertEqual(
            asked.1,
            [
                "interruptionAllowed": true, "verificationToken": "dG9rZW4=", "attributeNames": ["uid"],
                "supportedProviderIds": ["MockSSO"],
                "featuredProviderIds": [],
            ])
        XCTAssertEqual(asked.2, .seconds(10))

        let access = FakeHost(.success(["accessStatus": "notDetermined"]))
        let status = try await PartnerSSOHost(partner: "Apple", requester: access).checkAccessStatus(prompt: false)
        XCTAssertEqual(status, .notDetermined)
        XCTAssertEqual(access.asked.withLock { $0.first?.1 }, ["prompt": false])
    }

    func testNobodySignedInIsANullProvider() async throws {
        let fake = FakeHost(.success(["providerId": nil, "authenticationExpirationDate": nil]))
        let host = PartnerSSOHost(partner: "Apple", requester: fake)
        let metadata = try await host.requestAccountMetadata(PartnerAccountMetadataRequest(interruptionAllowed: false))
        XCTAssertNil(metadata.providerId)
        XCTAssertNil(metadata.authenticationExpirationDate)
    }

    func testHostErrorsBecomeReasons() {
        func reason(_ error: ErrorObject) -> PartnerSSOError { PartnerSSOHost.partnerError(.peer(error), method: "m") }
        XCTAssertEqual(
            reason(ErrorObject(code: ErrorCode(rawValue: 1), message: "x", data: ["reason": "userCancelled"])).reason, .userCancelled)
        let unsupported = reason(
            ErrorObject(
                code: .connectionClosed, message: "x", data: ["reason": "unsupportedProvider", "unsupportedProviderIdentifier": "Cable1"]))
        XCTAssertEqual(unsupported.reason, .unsupportedProvider)
        XCTAssertEqual(unsupported.unsupportedProviderIdentifier, "Cable1")
        XCTAssertEqual(
            reason(ErrorObject(code: .connectionClosed, message: "no", data: nil)).reason, .other, "a host's -32000 without a reason")
        XCTAssertEqual(reason(ErrorObject(code: .internalError, message: "x", data: ["reason": "surprise"])).reason, .other)
        // A host's error that reads like the connection's own is still the host's.
        XCTAssertEqual(reason(ErrorObject(code: .requestTimedOut, message: "Request timed out", data: nil)).reason, .other)
        XCTAssertEqual(reason(ErrorObject(code: .connectionClosed, message: "Connection closed", data: nil)).reason, .other)
        // The connection's own failures, by type.
        XCTAssertEqual(PartnerSSOHost.partnerError(.timedOut, method: "m").reason, .serviceTemporarilyUnavailable)
        XCTAssertEqual(PartnerSSOHost.partnerError(.connectionClosed, method: "m").reason, .userCancelled)
    }

    func testAGoneConnectionCountsAsCancelled() async {
        var fake: FakeHost? = FakeHost(.success(["accessStatus": "granted"]))
        let host = PartnerSSOHost(partner: "Apple", requester: fake!)
        fake = nil
        do {
            _ = try await host.checkAccessStatus(prompt: true)
            XCTFail("answered without a connection")
        } catch {
            XCTAssertEqual((error as? PartnerSSOError)?.reason, .userCancelled)
        }
    }

    func testMalformedResultsAreOther() async {
        for result: JSON in [["accessStatus": "maybe"], "granted", [:]] {
            do {
                let fake = FakeHost(.success(result))  // the host holds its requester weakly: keep it alive
                _ = try await PartnerSSOHost(partner: "Apple", requester: fake).checkAccessStatus(prompt: true)
                XCTFail("accepted \(result)")
            } catch {
                XCTAssertEqual((error as? PartnerSSOError)?.reason, .other)
            }
        }
        do {
            let fake = FakeHost(.success(["providerId": 7]))
            let host = PartnerSSOHost(partner: "Apple", requester: fake)
            _ = try await host.requestAccountMetadata(PartnerAccountMetadataRequest(interruptionAllowed: false))
            XCTFail("accepted a numeric providerId")
        } catch {
            XCTAssertEqual((error as? PartnerSSOError)?.reason, .other)
        }
    }
}
