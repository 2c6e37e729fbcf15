@preconcurrency import CJansson
import Glibc

extension JSON {
    /// UTF-8 JSON text of this value, through jansson.
    ///
    /// Compact by default (no spaces, no newline), or indented by 2 with `pretty`. Members keep
    /// their order; `/` is not escaped; non-ASCII is written as UTF-8. `.bigInteger` is written as
    /// its digits and `.double` in Swift's shortest round-trip form; NaN and infinities become `null`.
    public func serialized(pretty: Bool = false) -> [UInt8] {
        var raw = RawNumbers()
        guard let root = makeJansson(&raw) else { return Array("null".utf8) }
        defer { json_decref(root) }
        let flags = Int(JSON_ENCODE_ANY) | (pretty ? 2 : Int(JSON_COMPACT))
        // One pass into a buffer that fits most messages; a larger text is dumped again at its exact size.
        var bytes = dump(root, flags: flags, capacity: 1024)
        if bytes.count > 1024 { bytes = dump(root, flags: flags, capacity: bytes.count) }
        return raw.isEmpty ? bytes : raw.substitute(into: bytes)
    }

    /// jansson's text of `root` if it fits `capacity` bytes; otherwise an array whose count is the size needed.
    private func dump(_ root: UnsafeMutablePointer<json_t>, flags: Int, capacity: Int) -> [UInt8] {
        var needed = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            needed = json_dumpb(root, UnsafeMutableRawPointer(buffer.baseAddress)?.assumingMemoryBound(to: CChar.self), capacity, flags)
            count = needed <= capacity ? needed : 0
        }
        return needed <= capacity ? bytes : [UInt8](repeating: 0, count: needed)
    }

    /// The compact (or `pretty`) JSON text as a String.
    public func serializedString(pretty: Bool = false) -> String {
        String(decoding: serialized(pretty: pretty), as: UTF8.self)
    }

    /// A new jansson reference for this value (caller owns it), or nil if jansson refused to allocate.
    private func makeJansson(_ raw: inout RawNumbers) -> UnsafeMutablePointer<json_t>? {
        switch self {
        case .null:
            return json_null()
        case .bool(let value):
            return value ? json_true() : json_false()
        case .integer(let value):
            return json_integer(json_int_t(value))
        case .bigInteger(let digits):
            return raw.placeholder(for: digits)
        case .double(let value):
            guard value.isFinite else { return json_null() }
            return raw.placeholder(for: "\(value)")
        case .string(let value):
            return JSON.janssonString(value)
        case .array(let elements):
            let array = json_array()
            for element in elements {
                if let item = element.makeJansson(&raw) { json_array_append_new(array, item) }
            }
            return array
        case .object(let object):
            let result = json_object()
            for (key, value) in object {
                guard let item = value.makeJansson(&raw) else { continue }
                var key = key
                key.withUTF8 { utf8 in
                    utf8.withMemoryRebound(to: CChar.self) { _ = json_object_setn_new_nocheck(result, $0.baseAddress, $0.count, item) }
                }
            }
            return result
        }
    }

    static func janssonString(_ value: String) -> UnsafeMutablePointer<json_t>? {
        var value = value
        return value.withUTF8 { utf8 in
            utf8.withMemoryRebound(to: CChar.self) { json_stringn_nocheck($0.baseAddress, $0.count) }
        }
    }
}

/// Number literals jansson cannot write itself; they travel as unique strings and are
/// substituted back into the output text.
private struct RawNumbers {
    /// Drawn on first use only, so values without such numbers cost no random draw.
    private lazy var nonce = String(UInt64.random(in: .min ... .max), radix: 36)
    private var literals: [(quoted: [UInt8], literal: [UInt8])] = []

    var isEmpty: Bool { literals.isEmpty }

    mutating func placeholder(for literal: String) -> UnsafeMutablePointer<json_t>? {
        let marker = "\u{1}num-\(nonce)-\(literals.count)"
        literals.append((Array("\"\\u0001\(marker.dropFirst())\"".utf8), Array(literal.utf8)))
        return JSON.janssonString(marker)
    }

    /// Replaces each quoted placeholder in `text` by its literal.
    func substitute(into text: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(text.count)
        var index = 0
        let quote = UInt8(ascii: "\"")
        while index < text.count {
            if text[index] == quote, let match = literals.first(where: { text[index...].starts(with: $0.quoted) }) {
                output.append(contentsOf: match.literal)
                index += match.quoted.count
            } else {
                output.append(text[index])
                index += 1
            }
        }
        return output
    }
}

