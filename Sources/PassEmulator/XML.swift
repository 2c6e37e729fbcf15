import Foundation

/// Small XML text helpers: escaping, entity decoding and finding an element's text in trusted,
/// emulator-generated or MRSS strings. Not a general XML parser.
enum XML {
    /// Escapes `& < > " '`.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(character)
            }
        }
        return out
    }

    /// Decodes the five named entities and numeric references (`&#38;`, `&#x26;`); unknown ones stay as written.
    static func unescape(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var out = ""
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if character == "&", let semicolon = text[index...].firstIndex(of: ";"), text.distance(from: index, to: semicolon) <= 10 {
                let name = String(text[text.index(after: index)..<semicolon])
                if let decoded = decode(entity: name) {
                    out.append(decoded)
                    index = text.index(after: semicolon)
                    continue
                }
            }
            out.append(character)
            index = text.index(after: index)
        }
        return out
    }

    private static func decode(entity name: String) -> Character? {
        switch name {
        case "amp": return "&"
        case "lt": return "<"
        case "gt": return ">"
        case "quot": return "\""
        case "apos": return "'"
        default:
            guard name.hasPrefix("#") else { return nil }
            let digits = name.dropFirst()
            let value = digits.hasPrefix("x") || digits.hasPrefix("X") ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
            return value.flatMap(Unicode.Scalar.init).map(Character.init)
        }
    }

    /// The raw text between the first `<name>` (or `<name attr…>`) and the next `</name>` in `text`.
    /// An element's content as text: `<![CDATA[…]]>` sections taken literally, entities decoded elsewhere.
    static func characterData(_ content: String) -> String {
        var text = ""
        var rest = Substring(content)
        while let open = rest.range(of: "<![CDATA[") {
            text += unescape(String(rest[..<open.lowerBound]))
            let body = rest[open.upperBound...]
            guard let close = body.range(of: "]]>") else { return text + body }
            text += body[..<close.lowerBound]
            rest = body[close.upperBound...]
        }
        return text + unescape(String(rest))
    }

    static func elementText(_ text: String, _ name: String) -> String? {
        guard let open = openTag(text, name, from: text.startIndex) else { return nil }
        guard let close = text.range(of: "</\(name)>", range: open..<text.endIndex) else { return nil }
        return String(text[open..<close.lowerBound])
    }

    /// The index just past the first opening tag `<name>` or `<name …>` at or after `start`.
    static func openTag(_ text: String, _ name: String, from start: String.Index) -> String.Index? {
        var search = start
        while let found = text.range(of: "<\(name)", range: search..<text.endIndex) {
            let after = found.upperBound
            guard after < text.endIndex else { return nil }
            let next = text[after]
            if next == ">" { return text.index(after: after) }
            if next == " " || next == "\t" || next == "\n" || next == "\r" || next == "/" {
                guard let close = text[after...].firstIndex(of: ">") else { return nil }
                return text.index(after: close)
            }
            search = after
        }
        return nil
    }
}

/// A resource id told apart from others by its UTF-8 bytes, as Adobe's backend tells resources apart; Swift's `==`
/// on strings would take two Unicode normalizations of one id ("café" composed and decomposed) for one resource.
public struct ResourceKey: Hashable, Sendable, ExpressibleByStringLiteral {
    public let utf8: [UInt8]

    public init(_ id: String) { utf8 = Array(id.utf8) }
    public init(stringLiteral id: String) { self.init(id) }
}

/// Resource matching: a plain id matches itself; an MRSS document matches by its
/// `<channel><title>` text with entities decoded. Decisions echo the resource string as sent.
public enum ResourceMatcher {
    /// The id a resource string stands for.
    public static func id(of resource: String) -> String {
        let trimmed = resource.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix("<"), let channel = XML.openTag(trimmed, "channel", from: trimmed.startIndex),
            let title = XML.openTag(trimmed, "title", from: channel),
            let close = trimmed.range(of: "</title>", range: title..<trimmed.endIndex)
        else { return resource }
        return XML.characterData(String(trimmed[title..<close.lowerBound])).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
