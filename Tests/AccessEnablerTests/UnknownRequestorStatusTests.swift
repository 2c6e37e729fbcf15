import JSON
import XCTest

@testable import AccessEnabler

/// CFG400 for a requestor id the backend does not know (`Engine.unknownRequestorStatus`): the backend's words in
/// `details`, and, when they list the known ids, the one near the id given.
final class UnknownRequestorStatusTests: XCTestCase {
    private func error(details: String) -> EnhancedError {
        EnhancedError(
            status: 400, code: "invalid_parameter_service_provider", message: "The service provider parameter value is missing or invalid.",
            details: details, action: ErrorAction.none)
    }

    func testTheKnownIdsGoInDetailsAndTheNearOneIsNamed() {
        let status = Engine.unknownRequestorStatus(error(details: "Known service providers: REF, REF2"), requestorID: "ref")
        XCTAssertEqual(status.id, "CFG400")
        XCTAssertEqual(status.message, "The backend does not know the requestor id 'ref' (ids are case-sensitive); did you mean 'REF'?")
        XCTAssertEqual(status.details, "The service provider parameter value is missing or invalid. Known service providers: REF, REF2")
    }

    func testAnIdNearNoneIsNotGivenASuggestion() {
        let status = Engine.unknownRequestorStatus(error(details: "Known service providers: REF, REF2"), requestorID: "NOPE")
        XCTAssertEqual(status.message, "The backend does not know the requestor id 'NOPE' (ids are case-sensitive)")
    }

    func testABackendThatListsNothingKeepsItsMessage() {
        let status = Engine.unknownRequestorStatus(error(details: ""), requestorID: "ref")
        XCTAssertEqual(status.message, "The backend does not know the requestor id 'ref' (ids are case-sensitive)")
        XCTAssertEqual(status.details, "The service provider parameter value is missing or invalid.")
    }
}
