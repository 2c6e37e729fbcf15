import Synchronization
import ThreadAffinity

/// The host platform's TV-provider account, asked by the engine for partner single sign-on
/// (Adobe's "Apple SSO Cookbook (REST API V2)", steps 1–4; Protocol/README.md).
///
/// The two methods mirror `partnerSSO/checkAccessStatus` and `partnerSSO/requestAccountMetadata`, which mirror
/// Apple's `VSAccountManager` calls. A method that cannot answer throws `PartnerSSOError` with its reason (any
/// other error counts as `.other`); an answer slower than `AccessEnablerConfiguration.partnerSSOTimeout` (10 s)
/// counts as `.serviceTemporarilyUnavailable`.
public protocol PartnerSSOProvider: Sendable {
    /// The partner named in REST V2's `sessions/sso/{partner}` and `profiles/sso/{partner}`, e.g. `Apple`.
    var partner: String { get }

    /// Whether the user lets this application read the platform's TV-provider account.
    /// - Parameter prompt: true when the platform may ask the user now (only during getAuthentication).
    func checkAccessStatus(prompt: Bool) async throws -> PartnerAccessStatus

    /// The signed-in TV-provider account (with `interruptionAllowed` the platform may show its provider picker
    /// or its login). With a `verificationToken` the answer carries the SAML attribute-query response.
    func requestAccountMetadata(_ request: PartnerAccountMetadataRequest) async throws -> PartnerAccountMetadata
}

/// The platform's answer to checkAccessStatus (VSA `VSAccountAccessStatus`; Adobe Pass REST API V2, "Partner Single Sign-On APIs").
public enum PartnerAccessStatus: String, Sendable, CaseIterable {
    case granted, denied, restricted, notDetermined
}

/// The params of `partnerSSO/requestAccountMetadata` (Protocol/README.md).
public struct PartnerAccountMetadataRequest: Sendable, Equatable {
    /// May the platform show its picker or login UI (true only inside getAuthentication).
    public var interruptionAllowed: Bool
    /// REST V2's `authenticationRequest.request` (base64 SAML attribute query); nil when only the provider is asked.
    public var verificationToken: String?
    /// REST V2's `authenticationRequest.attributesNames`.
    public var attributeNames: [String]?
    /// platformMappingIds of the requestor's MVPDs with `enablePlatformServices` (SUPPORTED or PICKER boarding).
    public var supportedProviderIds: [String]?
    /// platformMappingIds of the requestor's MVPDs with `displayInPlatformPicker`.
    public var featuredProviderIds: [String]?

    public init(
        interruptionAllowed: Bool, verificationToken: String? = nil, attributeNames: [String]? = nil,
        supportedProviderIds: [String]? = nil, featuredProviderIds: [String]? = nil
    ) {
        self.interruptionAllowed = interruptionAllowed
        self.verificationToken = verificationToken
        self.attributeNames = attributeNames
        self.supportedProviderIds = supportedProviderIds
        self.featuredProviderIds = featuredProviderIds
    }
}

/// The result of `partnerSSO/requestAccountMetadata` (Protocol/README.md).
public struct PartnerAccountMetadata: Sendable, Equatable {
    /// The provider the user is signed in with at the platform (an MVPD's platformMappingId);
    /// nil when nobody is signed in at the platform.
    public var providerId: String?
    /// When the platform's authentication with that provider ends, epoch **milliseconds**.
    public var authenticationExpirationDate: Int64?
    /// The SAML attribute-query response, present when a verification token was sent (raw XML text).
    public var samlAttributeQueryResponse: String?

    public init(providerId: String?, authenticationExpirationDate: Int64?, samlAttributeQueryResponse: String? = nil) {
        self.providerId = providerId
        self.authenticationExpirationDate = authenticationExpirationDate
        self.samlAttributeQueryResponse = samlAttributeQueryResponse
    }
}

/// Why the host could not answer (VSA `VSErrorCode`; Protocol/README.md).
public struct PartnerSSOError: Error, Sendable, Equatable {
    public enum Reason: String, Sendable, CaseIterable {
        /// The user refused access (→ VSA403).
        case accessNotGranted
        /// The user picked a provider the platform cannot sign in with: with `unsupportedProviderIdentifier` the
        /// provider (a PICKER-boarded MVPD → its login page; an unknown one → N004), without it "Other TV
        /// Provider" (→ N003).
        case unsupportedProvider
        /// The user dismissed the platform's picker or login (→ N005).
        case userCancelled
        /// The platform's service did not answer (→ VSA503).
        case serviceTemporarilyUnavailable
        /// The provider refused the request (→ VSA503).
        case providerRejected
        /// The verification token was not accepted (→ VSA503).
        case invalidVerificationToken
        /// Anything else (→ APPL_ERROR).
        case other
    }

    public var reason: Reason
    /// `unsupportedProvider` only: the platform's id of the provider the user picked.
    public var unsupportedProviderIdentifier: String?
    /// The host's explanation, reported in the status's `details`.
    public var message: String?

    public init(_ reason: Reason, unsupportedProviderIdentifier: String? = nil, message: String? = nil) {
        self.reason = reason
        self.unsupportedProviderIdentifier = unsupportedProviderIdentifier
        self.message = message
    }

    /// The reason named by a host (a missing or unknown one is `.other`, Protocol/README.md).
    public init(reasonName: String?, unsupportedProviderIdentifier: String? = nil, message: String? = nil) {
        self.init(
            reasonName.flatMap(Reason.init(rawValue:)) ?? .other, unsupportedProviderIdentifier: unsupportedProviderIdentifier,
            message: message)
    }
}

/// Runs one host call with the engine's deadline: the first of the answer and the timeout wins; a late answer
/// is dropped. Errors other than `PartnerSSOError` become `.other`. The call runs in a task of the engine's executor
/// (never Swift's global pool), the deadline is a timer of it.
enum PartnerCall {
    static func run<T: Sendable>(
        timeout: Duration, on executor: any TimerExecutor, _ body: @escaping @Sendable () async throws -> T
    ) async -> Result<T, PartnerSSOError> {
        let once = PartnerOnce<Result<T, PartnerSSOError>>()
        return await withCheckedContinuation { continuation in
            once.set(continuation)
            let deadline = executor.run(after: timeout) {
                once.resume(.failure(PartnerSSOError(.serviceTemporarilyUnavailable, message: "The platform did not answer in time")))
            }
            Task(executorPreference: executor) {
                executor.checkOwnThread()
                defer { deadline.cancel() }
                do {
                    once.resume(.success(try await body()))
                } catch let error as PartnerSSOError {
                    once.resume(.failure(error))
                } catch {
                    once.resume(.failure(PartnerSSOError(.other, message: "\(error)")))
                }
            }
        }
    }
}

/// A continuation resumed at most once, from whichever task comes first.
private final class PartnerOnce<T: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<T, Never>?>(nil)

    func set(_ value: CheckedContinuation<T, Never>) { continuation.withLock { $0 = value } }

    func resume(_ value: T) {
        let taken = continuation.withLock { current in
            defer { current = nil }
            return current
        }
        taken?.resume(returning: value)
    }
}
