import Foundation
import JSON

/// One HTTP request as the emulator's handlers see it: method, path (no query), decoded query
/// arguments, headers with lower-cased names, and the raw body bytes.
public struct HTTPRequest: Sendable {
    public var method: String
    public var path: String
    public var query: [String: String]
    public var headers: [String: String]
    public var body: [UInt8]

    public init(method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.query = query
        var lowered: [String: String] = [:]
        for (name, value) in headers { lowered[name.lowercased()] = value }
        self.headers = lowered
        self.body = body
    }

    /// The header value for a case-insensitive name.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The body decoded as `application/x-www-form-urlencoded` (later duplicates win).
    public var form: [String: String] { FormCoding.decode(String(decoding: body, as: UTF8.self)) }

    /// The path (already percent-decoded by the server) split on `/`, empty segments dropped.
    public var segments: [String] { path.split(separator: "/").map(String.init) }
}

/// One HTTP response: status, headers in order, body bytes. `delivery` lets a fault break it on the wire.
public struct HTTPResponse: Sendable {
    /// How the server puts the response on the wire.
    public enum Delivery: Sendable {
        case normal
        /// Announce the full Content-Length, send only the first half of the body, then close.
        case truncated
        /// Close the connection without sending anything.
        case drop
    }

    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]
    public var delivery: Delivery = .normal
    /// How long the server waits before putting the response on the wire (a latency fault). The connection is
    /// suspended meanwhile: no thread waits, and the other connections are served.
    public var delay: Duration = .zero

    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The value of the first header with this name (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    /// A JSON response with `Content-Type: application/json;charset=UTF-8`.
    public static func json(_ status: Int, _ value: JSON) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json;charset=UTF-8")], body: value.serialized())
    }

    /// An HTML page (`text/html;charset=UTF-8`).
    public static func html(_ status: Int, _ page: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "text/html;charset=UTF-8")], body: Array(page.utf8))
    }

    /// A plain-text response.
    public static func text(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "text/plain;charset=UTF-8")], body: Array(text.utf8))
    }

    /// A 302 Found to `location`, with an empty body.
    public static func redirect(_ location: String) -> HTTPResponse {
        HTTPResponse(status: 302, headers: [("Location", location), ("Content-Type", "text/html;charset=UTF-8")], body: [])
    }
}

/// `application/x-www-form-urlencoded` and URL query encoding.
public enum FormCoding {
    /// Decodes `a=1&b=x%20y` (with `+` as space) into a dictionary; later duplicates win.
    public static func decode(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = unescape(String(parts[0]))
            let value = parts.count > 1 ? unescape(String(parts[1])) : ""
            result[name] = value
        }
        return result
    }

    /// Percent-decodes one form component (`+` means space).
    public static func unescape(_ text: String) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    private static let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// Percent-encodes a component so it can sit in a query string or form body.
    public static func escape(_ text: String) -> String {
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// Builds `a=1&b=2` from ordered pairs.
    public static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }
}
