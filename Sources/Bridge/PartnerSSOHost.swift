import AccessEnabler
import JSON
import JSONRPC

/// Sends a daemon→host request and reports its answer once (`JSONRPC.Connection` does).
public protocol HostRequester: AnyObject, Sendable {
    func request(method: String, params: JSON, timeout: Duration, completion: @escaping @Sendable (Result<JSON, RequestFailure>) -> Void)
}

extension Connection: HostRequester {}

/// The engine's `PartnerSSOProvider` answered by the host over JSON-RPC (Protocol/README.md "Daemon → host
/// requests"): `partnerSSO/checkAccessStatus {prompt}` → `{accessStatus}` and
/// `partnerSSO/requestAccountMetadata {interruptionAllowed, verificationToken?, attributeNames?,
/// supportedProviderIds?, featuredProviderIds?}` → `{providerId, authenticationExpirationDate (epoch ms),
/// samlAttributeQueryResponse?}`. Only a host that declared `partnerSSO` in `init` gets one.
///
/// A host error's `data.reason` becomes the `PartnerSSOError` reason (missing or unknown: `other`, with
/// `data.unsupportedProviderIdentifier` for `unsupportedProvider`); no answer within 10 s is
/// `serviceTemporarilyUnavailable`; a connection that closes first counts as `userCancelled`. A result of the
/// wrong shape is `other`.
final class PartnerSSOHost: PartnerSSOProvider {
    /// How long the host has for one answer (Protocol/README.md).
    static let timeout: Duration = .seconds(10)

    let partner: String
    private weak let requester: (any HostRequester)?
    /// Whether the instance was replaced (a later `init`): it then asks the host nothing more.
    private let replaced: @Sendable () -> Bool

    init(partner: String, requester: any HostRequester, replaced: @escaping @Sendable () -> Bool = { false }) {
        self.partner = partner
        self.requester = requester
        self.replaced = replaced
    }

    func checkAccessStatus(prompt: Bool) async throws -> PartnerAccessStatus {
        let result = try await ask("partnerSSO/checkAccessStatus", ["prompt": .bool(prompt)])
        guard let text = result["accessStatus"]?.stringValue, let status = PartnerAccessStatus(rawValue: text) else {
            throw PartnerSSOError(.other, message: "partnerSSO/checkAccessStatus: no valid accessStatus in the result")
        }
        return status
    }

    func requestAccountMetadata(_ request: PartnerAccountMetadataRequest) async throws -> PartnerAccountMetadata {
        var params: JSONObject = ["interruptionAllowed": .bool(request.interruptionAllowed)]
        if let token = request.verificationToken { params["verificationToken"] = .string(token) }
        if let names = request.attributeNames { params["attributeNames"] = .array(names.map { .string($0) }) }
        if let ids = request.supportedProviderIds { params["supportedProviderIds"] = .array(ids.map { .string($0) }) }
        if let ids = request.featuredProviderIds { params["featuredProviderIds"] = .array(ids.map { .string($0) }) }
        let result = try await ask("partnerSSO/requestAccountMetadata", .object(params))
        guard result.objectValue != nil else {
            throw PartnerSSOError(.other, message: "partnerSSO/requestAccountMetadata: the result is not an object")
        }
        let provider = result["providerId"]
        let expiry = result["authenticationExpirationDate"]
        let saml = result["samlAttributeQueryResponse"]
        guard provider == nil || provider?.isNull == true || provider?.stringValue != nil,
            expiry == nil || expiry?.isNull == true || expiry?.int64Value != nil,
            saml == nil || saml?.isNull == true || saml?.stringValue != nil
        else {
            throw PartnerSSOError(.other, message: "partnerSSO/requestAccountMetadata: a member has the wrong type")
        }
        return PartnerAccountMetadata(
            providerId: provider?.stringValue, authenticationExpirationDate: expiry?.int64Value,
            samlAttributeQueryResponse: saml?.stringValue)
    }

    /// One request to the host; its error as a `PartnerSSOError`.
    private func ask(_ method: String, _ params: JSON) async throws -> JSON {
        guard let requester, !replaced() else { throw PartnerSSOError(.userCancelled, message: "the host is gone") }
        let answer = await withCheckedContinuation { continuation in
            requester.request(method: method, params: params, timeout: Self.timeout) { continuation.resume(returning: $0) }
        }
        switch answer {
        case .success(let result):
            return result
        case .failure(let error):
            throw Self.partnerError(error, method: method)
        }
    }

    /// A host's error by its `data.reason`; the connection's own failures (no answer in time, connection
    /// closed) by their type, whatever codes a host's errors use.
    static func partnerError(_ failure: RequestFailure, method: String) -> PartnerSSOError {
        let error: ErrorObject
        switch failure {
        case .timedOut: return PartnerSSOError(.serviceTemporarilyUnavailable, message: "\(method): no answer within 10 s")
        case .connectionClosed:
            // beginClosing fails them at the end of the host's input and when the daemon stops (the host may still be there).
            return PartnerSSOError(.userCancelled, message: "the connection is closing: the host's input ended, or the daemon is stopping")
        case .peer(let peerError): error = peerError
        }
        let reason = error.data?["reason"]?.stringValue.flatMap(PartnerSSOError.Reason.init(rawValue:))
        return PartnerSSOError(
            reason ?? .other, unsupportedProviderIdentifier: error.data?["unsupportedProviderIdentifier"]?.stringValue,
            message: error.message)
    }
}
