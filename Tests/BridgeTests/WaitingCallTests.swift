import AccessEnabler
import XCTest

@testable import Bridge

/// The calls that wait for setRequestor: one list (`WaitingCall`, held by the engine's machine), the one
/// `Protocol/README.md` (Lifecycle 3) states, each a method the daemon serves.
final class WaitingCallTests: XCTestCase {
    func testTheWaitingCallsAreTheDocumentedOnes() {
        XCTAssertEqual(
            WaitingCall.allCases.map(\.rawValue),
            [
                "checkAuthentication", "getAuthentication", "checkAuthorization", "getAuthorization", "checkPreauthorizedResources",
                "preauthorize", "getMetadata", "logout",
            ])
        for call in WaitingCall.allCases { XCTAssertNotNil(MethodTable.byName[call.rawValue], call.rawValue) }
        let waiting = Set(WaitingCall.allCases.map(\.rawValue))
        for name in [
            "setOptions", "setSelectedProvider", "getSelectedProvider", "handleExternalURL", "getAuthenticationToken", "init", "rpc.stats",
        ] {
            XCTAssertFalse(waiting.contains(name), name)
        }
    }
}
