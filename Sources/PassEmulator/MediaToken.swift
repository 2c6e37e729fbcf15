import Foundation

/// The short media token (Adobe Pass, "Media tokens"): `<signatureInfo>SIG<signatureInfo>` followed by a
/// `<shortAuthorizationToken>` element, the whole thing base64-encoded into `serializedToken`. SIG is the
/// base64 RSA-SHA256 signature of the exact `<shortAuthorizationToken>…</shortAuthorizationToken>` bytes.
public struct MediaToken: Sendable, Equatable {
    public var sessionGUID: String
    public var requestorID: String
    /// The resource exactly as requested (XML-escaped inside the token).
    public var resourceID: String
    /// Lifetime in milliseconds.
    public var ttl: Int64
    /// Issue time in milliseconds since the epoch.
    public var issueTime: Int64
    public var mvpdId: String
    public var proxyMvpdId: String

    public init(
        sessionGUID: String, requestorID: String, resourceID: String, ttl: Int64, issueTime: Int64, mvpdId: String, proxyMvpdId: String = ""
    ) {
        self.sessionGUID = sessionGUID
        self.requestorID = requestorID
        self.resourceID = resourceID
        self.ttl = ttl
        self.issueTime = issueTime
        self.mvpdId = mvpdId
        self.proxyMvpdId = proxyMvpdId
    }

    /// The `<shortAuthorizationToken>` element that gets signed.
    public var element: String {
        "<shortAuthorizationToken><sessionGUID>\(XML.escape(sessionGUID))</sessionGUID>"
            + "<requestorID>\(XML.escape(requestorID))</requestorID><resourceID>\(XML.escape(resourceID))</resourceID>"
            + "<ttl>\(ttl)</ttl><issueTime>\(issueTime)</issueTime><mvpdId>\(XML.escape(mvpdId))</mvpdId>"
            + "<proxyMvpdId>\(XML.escape(proxyMvpdId))</proxyMvpdId></shortAuthorizationToken>"
    }

    /// The base64 `serializedToken` signed with `key`, or nil when the key cannot sign.
    public func serialized(signedWith key: RSAKey) -> String? {
        let body = element
        guard let signature = key.sign(Array(body.utf8)) else { return nil }
        let text = "<signatureInfo>\(Data(signature).base64EncodedString())<signatureInfo>\(body)"
        return Data(text.utf8).base64EncodedString()
    }

    /// Why a token is not acceptable, mirroring Adobe's verifier results.
    public enum Rejection: Error, Equatable, CustomStringConvertible {
        case invalidFormat(String)
        case invalidSignature
        case expired(notAfter: Int64, now: Int64)
        case invalidResource(expected: String, actual: String)

        public var description: String {
            switch self {
            case .invalidFormat(let why): return "invalid token format: \(why)"
            case .invalidSignature: return "invalid signature"
            case .expired(let notAfter, let now): return "token expired: notAfter \(notAfter) ms is before now \(now) ms"
            case .invalidResource(let expected, let actual): return "resource mismatch: token is for \(actual), expected \(expected)"
            }
        }
    }

    /// Checks a `serializedToken`: format, signature under `key`, validity window at `nowMillis`, and, when
    /// `resource` is given, that the token's resource equals it exactly or its MRSS channel title equals it.
    public static func verify(_ serialized: String, key: RSAKey, nowMillis: Int64, resource: String?) throws(Rejection) -> MediaToken {
        guard let data = Data(base64Encoded: serialized.trimmingCharacters(in: .whitespacesAndNewlines)),
            let text = String(data: data, encoding: .utf8)
        else { throw .invalidFormat("not base64 of UTF-8 text") }
        let marker = "<signatureInfo>"
        guard text.hasPrefix(marker) else { throw .invalidFormat("no leading <signatureInfo>") }
        let rest = text.dropFirst(marker.count)
        guard let end = rest.range(of: marker) else { throw .invalidFormat("unterminated <signatureInfo>") }
        let signatureText = String(rest[rest.startIndex..<end.lowerBound])
        let body = String(rest[end.upperBound...])
        guard body.hasPrefix("<shortAuthorizationToken>"), body.hasSuffix("</shortAuthorizationToken>") else {
            throw .invalidFormat("no <shortAuthorizationToken> element")
        }
        guard let signature = Data(base64Encoded: signatureText) else { throw .invalidFormat("signature is not base64") }
        guard key.verify(Array(body.utf8), signature: [UInt8](signature)) else { throw .invalidSignature }
        func field(_ name: String) -> String? { XML.elementText(body, name).map(XML.unescape) }
        guard let ttlText = field("ttl"), let ttl = Int64(ttlText), let issuedText = field("issueTime"), let issued = Int64(issuedText),
            let resourceID = field("resourceID")
        else { throw .invalidFormat("missing ttl, issueTime or resourceID") }
        let token = MediaToken(
            sessionGUID: field("sessionGUID") ?? "", requestorID: field("requestorID") ?? "", resourceID: resourceID,
            ttl: ttl, issueTime: issued, mvpdId: field("mvpdId") ?? "", proxyMvpdId: field("proxyMvpdId") ?? "")
        guard nowMillis <= issued + ttl else { throw .expired(notAfter: issued + ttl, now: nowMillis) }
        if let resource, resource != resourceID, ResourceMatcher.id(of: resourceID) != resource {
            throw .invalidResource(expected: resource, actual: resourceID)
        }
        return token
    }
}
