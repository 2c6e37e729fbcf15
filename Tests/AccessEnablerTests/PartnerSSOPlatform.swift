import AccessEnabler
import Foundation
import JSON
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A scripted host platform for partner SSO: a TV-provider account the test sets up, and the SAML answer
/// obtained from the emulator's `/__admin/partner-saml` (the MVPD answering the platform; Sources/PassEmulator/README.md).
final class ScriptedPlatform: PartnerSSOProvider {
    struct Script {
        /// checkAccessStatus's answer.
        var access: Result<PartnerAccessStatus, PartnerSSOError> = .success(.granted)
        /// The provider signed in at the platform (nil: nobody) and its authentication expiry (epoch ms).
        var signedIn: String? = "MockSSO"
        var expires: Int64 = Int64(Date().timeIntervalSince1970 * 1000) + 3_600_000
        /// The answer of the platform picker (interactive request): a provider id, or an error; nil = `signedIn`.
        var picker: Result<String, PartnerSSOError>?
        /// An error for the SAML request (the one with a verification token).
        var samlError: PartnerSSOError?
        /// How long every answer takes.
        var delay: Duration = .zero
    }

    /// One request the engine made.
    enum Request: Equatable {
        case access(prompt: Bool)
        case metadata(interruptionAllowed: Bool, withToken: Bool)
    }

    let partner = "Apple"
    let emulatorURL: URL
    private let state = Mutex<(script: Script, requests: [Request], last: PartnerAccountMetadataRequest?)>((Script(), [], nil))

    init(emulatorURL: URL, _ configure: (inout Script) -> Void = { _ in }) {
        self.emulatorURL = emulatorURL
        state.withLock { configure(&$0.script) }
    }

    func change(_ configure: (inout Script) -> Void) { state.withLock { configure(&$0.script) } }

    /// Removes and returns the requests made so far.
    func takeRequests() -> [Request] {
        state.withLock { state in
            defer { state.requests = [] }
            return state.requests
        }
    }

    /// The params of the last metadata request.
    var lastMetadataRequest: PartnerAccountMetadataRequest? { state.withLock { $0.last } }

    func checkAccessStatus(prompt: Bool) async throws -> PartnerAccessStatus {
        let script = state.withLock { state in
            state.requests.append(.access(prompt: prompt))
            return state.script
        }
        try await Task.sleep(for: script.delay)
        return try script.access.get()
    }

    func requestAccountMetadata(_ request: PartnerAccountMetadataRequest) async throws -> PartnerAccountMetadata {
        let script = state.withLock { state in
            state.requests.append(.metadata(interruptionAllowed: request.interruptionAllowed, withToken: request.verificationToken != nil))
            state.last = request
            // The user signs in through the platform's picker: the platform account is that provider's from now on.
            if request.interruptionAllowed, case .success(let picked)? = state.script.picker { state.script.signedIn = picked }
            return state.script
        }
        try await Task.sleep(for: script.delay)
        let provider = script.signedIn
        if request.interruptionAllowed, case .failure(let error)? = script.picker { throw error }
        guard let token = request.verificationToken else {
            return PartnerAccountMetadata(providerId: provider, authenticationExpirationDate: provider == nil ? nil : script.expires)
        }
        if let error = script.samlError { throw error }
        guard let provider else { throw PartnerSSOError(.other, message: "nobody signed in") }
        let saml = try await Self.partnerSAML(emulatorURL, providerId: provider, request: token)
        // Line breaks and indentation as a platform may return them; the engine removes them before encoding.
        let pretty = "\n  " + saml.replacingOccurrences(of: "<saml:Assertion>", with: "\n\t<saml:Assertion>") + "\n"
        return PartnerAccountMetadata(
            providerId: provider, authenticationExpirationDate: script.expires, samlAttributeQueryResponse: pretty)
    }

    /// `POST /__admin/partner-saml` with the demo user.
    static func partnerSAML(_ base: URL, providerId: String, request token: String) async throws -> String {
        var request = URLRequest(url: base.appendingPathComponent("__admin/partner-saml"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let body: JSON = ["providerId": .string(providerId), "username": "demo", "password": "demo", "request": .string(token)]
        request.httpBody = Data(body.serialized())
        let (data, response) = try await Browser.session.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200, let saml = try JSON.parse([UInt8](data))["samlResponse"]?.stringValue
        else {
            throw PartnerSSOError(.invalidVerificationToken, message: "the emulator refused the request")
        }
        return saml
    }
}
