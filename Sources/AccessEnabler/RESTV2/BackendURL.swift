/// A REST API V2 base URL the engine may use (the command line's `--backend`, setRequestor's `serviceProviders`):
/// https anywhere, plain http only on a loopback host; a host, an optional port (at most 65535) and path, and
/// nothing else. Requests go to `text` with its trailing `/` dropped, followed by the endpoint's path.
public struct BackendURL: Sendable, Hashable, CustomStringConvertible {
    /// The URL as given, e.g. `https://api.auth.adobe.com`.
    public let text: String

    /// Why a text is not a backend URL (`DaemonOptions.checkBackendURL` words each for the command line).
    public enum Refusal: Error, Equatable {
        /// Not an absolute URL with a host (`AbsoluteURL`), or its path not strictly RFC 3986's.
        case notAbsolute
        /// A port outside 1–65535.
        case port
        /// A user, a query or a fragment: the endpoints' paths could not follow it.
        case notBase
        /// http on a host that is not loopback.
        case plainHTTP
        /// Neither http nor https.
        case scheme
    }

    /// - Throws: `Refusal` when `text` is not an absolute https URL with a host, nor http on a loopback host, or
    /// has more than a host, a port and a path.
    public init(_ text: String) throws(Refusal) {
        guard let url = AbsoluteURL(text), !url.host.isEmpty else { throw .notAbsolute }
        if let port = url.port, !(1...65_535).contains(Int(port) ?? 0) { throw .port }
        guard url.userinfo == nil, url.query == nil, url.fragment == nil else { throw .notBase }
        guard url.isStrict else { throw .notAbsolute }  // libcurl takes the path as RFC 3986 writes it
        switch url.scheme {
        case "https": break
        case "http": guard Self.isLoopback(url.host) else { throw .plainHTTP }
        default: throw .scheme
        }
        self.text = text
    }

    public var description: String { text }

    /// `text` without its trailing `/`s: what endpoint paths are appended to, and what keys a login's store scope.
    var base: String { text.trimmingSuffix("/") }

    /// `localhost`, `::1` (bracketed or not) or any IPv4 address in 127.0.0.0/8, case-insensitive.
    public static func isLoopback(_ host: String) -> Bool {
        var bare = Substring(host.lowercased())
        while bare.first == "[" { bare.removeFirst() }
        while bare.last == "]" { bare.removeLast() }
        if bare == "localhost" || bare == "::1" { return true }
        let octets = bare.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }
}
