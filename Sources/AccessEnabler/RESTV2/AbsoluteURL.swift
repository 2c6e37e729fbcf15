/// An absolute URL with an authority, split by RFC 3986's generic syntax ("Uniform Resource Identifier (URI):
/// Generic Syntax", section 3): `scheme://[userinfo@]host[:port][path][?query][#fragment]`. Every component keeps
/// its percent-escapes. The engine reads its backend, service provider, redirect and PostgreSQL URLs with it.
public struct AbsoluteURL: Sendable, Hashable {
    /// The URL as given.
    public let text: String
    /// Lower-cased (`https`, `adobepass`, `postgresql`).
    public let scheme: String
    /// Before the authority's last `@`; nil when there is none.
    public let userinfo: String?
    /// A registered name or IPv4 address as written, or an IP literal with its brackets (`[::1]`); may be empty.
    public let host: String
    /// The digits after the host's `:`; nil when there is no `:`.
    public let port: String?
    /// From the authority's end up to `?` or `#`: empty, or starting with `/`.
    public let path: String
    /// After the first `?`, without it; nil when there is none.
    public let query: String?
    /// After `#`, without it; nil when there is none.
    public let fragment: String?

    /// Whether the path, query and fragment also hold only what RFC 3986 allows there (`isValid`); an app's
    /// redirect may carry a query as the page wrote it, so the others are taken with any character but space and
    /// controls.
    public let isStrict: Bool

    /// nil unless `text` is such a URL: a scheme (a letter, then letters, digits, `+`, `-`, `.`), `://`, an
    /// authority of only the characters RFC 3986 allows there (no space, control or non-ASCII character; `%`
    /// followed by two hex digits; `[` and `]` only around an IP literal host, which holds a `:`; a port of digits),
    /// then no space and no control character.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon > 0, Self.isLetter(bytes[0]),
            bytes[..<colon].allSatisfy({ Self.isLetter($0) || Self.isDigit($0) || "+-.".utf8.contains($0) }),
            bytes[colon...].starts(with: "://".utf8)
        else { return nil }
        let authorityStart = colon + 3
        let authorityEnd = bytes[authorityStart...].firstIndex(where: { "/?#".utf8.contains($0) }) ?? bytes.endIndex
        let queryStart = bytes[authorityEnd...].firstIndex(where: { "?#".utf8.contains($0) }) ?? bytes.endIndex
        let fragmentStart = bytes[queryStart...].firstIndex(of: UInt8(ascii: "#")) ?? bytes.endIndex
        func string(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }

        // The authority: userinfo before its last "@", then the host and an optional port.
        let at = bytes[authorityStart..<authorityEnd].lastIndex(of: UInt8(ascii: "@"))
        let hostStart = at.map { $0 + 1 } ?? authorityStart
        var hostEnd = authorityEnd
        if bytes[hostStart..<authorityEnd].first == UInt8(ascii: "[") {
            guard let close = bytes[hostStart..<authorityEnd].firstIndex(of: UInt8(ascii: "]")),
                bytes[(hostStart + 1)..<close].allSatisfy({ Self.isHexDigit($0) || ":.".utf8.contains($0) }),
                bytes[(hostStart + 1)..<close].contains(UInt8(ascii: ":"))
            else { return nil }
            hostEnd = close + 1
            guard hostEnd == authorityEnd || bytes[hostEnd] == UInt8(ascii: ":") else { return nil }
        } else {
            hostEnd = bytes[hostStart..<authorityEnd].firstIndex(of: UInt8(ascii: ":")) ?? authorityEnd
        }
        let portText = hostEnd < authorityEnd ? bytes[(hostEnd + 1)..<authorityEnd] : nil
        guard portText?.allSatisfy(Self.isDigit) ?? true,
            Self.isValid(bytes[authorityStart..<(at ?? authorityStart)], extra: ":"),
            bytes[hostStart..<hostEnd].first == UInt8(ascii: "[") || Self.isValid(bytes[hostStart..<hostEnd], extra: ""),
            !bytes[authorityEnd...].contains(where: { $0 <= 0x20 || $0 == 0x7F })
        else { return nil }
        isStrict =
            Self.isValid(bytes[authorityEnd..<queryStart], extra: ":@/")
            && Self.isValid(bytes[queryStart..<fragmentStart].dropFirst(), extra: ":@/?")
            && Self.isValid(bytes[fragmentStart...].dropFirst(), extra: ":@/?")

        self.text = text
        scheme = string(0..<colon).lowercased()
        userinfo = at.map { string(authorityStart..<$0) }
        host = string(hostStart..<hostEnd)
        port = portText.map { String(decoding: $0, as: UTF8.self) }
        path = string(authorityEnd..<queryStart)
        query = queryStart < fragmentStart ? string((queryStart + 1)..<fragmentStart) : nil
        fragment = fragmentStart < bytes.endIndex ? string((fragmentStart + 1)..<bytes.endIndex) : nil
    }

    /// `text` with each percent-escape whose byte `decodes` takes decoded and every other escape's hex digits in upper
    /// case (RFC 3986, 2.1 and 6.2.2.1); a `%` without two hex digits after it stays as it is.
    static func percentDecoded(_ text: some StringProtocol, where decodes: (UInt8) -> Bool = { _ in true }) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        func value(_ byte: UInt8) -> UInt8? {
            isDigit(byte) ? byte - UInt8(ascii: "0") : isHexDigit(byte) ? (byte | 0x20) - UInt8(ascii: "a") + 10 : nil
        }
        var input = Array(text.utf8)[...]
        var output: [UInt8] = []
        while let byte = input.popFirst() {
            guard byte == UInt8(ascii: "%"), input.count >= 2, let high = value(input[input.startIndex]),
                let low = value(input[input.startIndex + 1])
            else {
                output.append(byte)
                continue
            }
            input = input.dropFirst(2)
            let decoded = high << 4 | low
            output += decodes(decoded) ? [decoded] : [UInt8(ascii: "%"), digits[Int(high)], digits[Int(low)]]
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// A letter, a digit, `-`, `.`, `_` or `~` (RFC 3986, 2.3).
    static func isUnreserved(_ byte: UInt8) -> Bool { isLetter(byte) || isDigit(byte) || "-._~".utf8.contains(byte) }

    /// Unreserved characters, sub-delimiters, `extra` and percent-escapes with two hex digits (RFC 3986, 2.1–2.3).
    private static func isValid(_ bytes: ArraySlice<UInt8>, extra: String) -> Bool {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.endIndex, isHexDigit(bytes[index + 1]), isHexDigit(bytes[index + 2])
                else { return false }
                index += 3
                continue
            }
            guard isLetter(byte) || isDigit(byte) || "-._~!$&'()*+,;=".utf8.contains(byte) || extra.utf8.contains(byte)
            else { return false }
            index += 1
        }
        return true
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") }
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
    private static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || ((byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "f"))
    }
}
