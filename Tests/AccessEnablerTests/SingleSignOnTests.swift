import JSON
import XCTest

@testable import AccessEnabler

/// Single sign-on by platform identity and by service token against the emulator (Protocol/README.md): two
/// engines on two stores (two devices, two DCR clients) share nothing but the token.
final class SingleSignOnTests: EmulatorTestCase {
    /// A three-part JWS whose payload is `{"iss": iss, "sub": sub}`.
    func jwt(_ iss: String, _ sub: String) -> String {
        func part(_ json: JSON) -> String {
            Data(json.serialized()).base64EncodedString().replacingOccurrences(of: "=", with: "")
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        }
        return "\(part(["alg": "RS256"])).\(part(["iss": .string(iss), "sub": .string(sub)])).c2ln"
    }

    func testAPlatformIdentityLogsInAnotherAppAtCheckAuthentication() async throws {
        let tokens = SingleSignOnTokens(subjectToken: jwt("platform", "user-1"))
        let first = try makeClient(singleSignOn: tokens)
        await ready(first)
        try await login(first)
        let second = try makeClient(singleSignOn: tokens)
        await ready(second)
        let status = await second.engine.checkAuthentication()
        XCTAssertEqual(status, AuthenticationStatus(status: 1, errorCode: ""))
        let source = await second.engine.getMetadata(.userMetadata(key: "tokenSource"), arguments: [:])
        XCTAssertEqual(source.metadata, "platformSSO")
        // Now stored: the next check needs no backend call.
        let again = await second.engine.checkAuthentication()
        XCTAssertEqual(again.status, 1)
        let other = try makeClient(singleSignOn: SingleSignOnTokens(subjectToken: jwt("platform", "user-2")))
        await ready(other)
        let nobody = await other.engine.checkAuthentication()
        XCTAssertEqual(nobody.status, 0)
    }

    func testAServiceTokenLogsInAnotherDeviceAtGetAuthenticationWithoutADialog() async throws {
        let tokens = SingleSignOnTokens(serviceToken: jwt("idp", "account-42"))
        let first = try makeClient(singleSignOn: tokens)
        await ready(first)
        try await login(first)
        let second = try makeClient(singleSignOn: tokens)
        await ready(second)
        let status = await second.engine.getAuthentication(forceAuthn: false, data: nil, filter: nil)
        XCTAssertEqual(status, AuthenticationStatus(status: 1, errorCode: ""))
        XCTAssertFalse(second.delegate.callbacks.contains { if case .displayProviderDialog = $0 { true } else { false } })
        let source = await second.engine.getMetadata(.userMetadata(key: "tokenSource"), arguments: [:])
        XCTAssertEqual(source.metadata, "serviceTokenSSO")
        let outcome = await second.engine.authorize("ch1", data: nil, loginIfNeeded: false)
        guard case .token(let token, _, _) = outcome else { return XCTFail("not authorized: \(outcome)") }
        try assertTokenVerifies(token, resource: "ch1")
    }
}
