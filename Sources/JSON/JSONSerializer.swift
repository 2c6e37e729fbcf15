// JSON text is written here in Swift, not through jansson (which still parses input).
//
// Why: jansson cannot write a number it does not hold (a `.bigInteger`, or a `.double` in Swift's shortest
// round-trip form), so writing through it needed placeholder strings substituted in a second pass, which was
// quadratic in the number of such values; it also copies every value into jansson's tree first. Writing
// JSON is one pass of appends and the daemon controls all of its output, so this writer is linear in the
// size of the text: each byte is appended once, strings are copied in runs between escapes.

extension JSON {
    /// UTF-8 JSON text of this value, in time linear in its size.
    ///
    /// Compact by default (no spaces, no newline), or indented by 2 with `pretty`. Members keep
    /// their order; `/` is not escaped; non-ASCII is written as UTF-8; control characters are escaped
    /// (`\n`, `\t`… or `\u00XX`). `.bigInteger` is written as its digits and `.double` in Swift's
    /// shortest round-trip form; NaN and infinities become `null`.
    public func serialized(pretty: Bool = false) -> [UInt8] {
        var writer = JSONWriter(pretty: pretty)
        writer.bytes.reserveCapacity(256)
        writer.write(self, depth: 0)
        return writer.bytes
    }

    /// Appends the compact JSON text of this value to `bytes` (as ``serialized(pretty:)``, no second buffer).
    public func serialize(into bytes: inout [UInt8]) {
        var writer = JSONWriter(pretty: false)
        swap(&writer.bytes, &bytes)
        writer.write(self, depth: 0)
        swap(&writer.bytes, &bytes)
    }

    /// The compact (or `pretty`) JSON text as a String.
    public func serializedString(pretty: Bool = false) -> String {
        String(decoding: serialized(pretty: pretty), as: UTF8.self)
    }
}

/// Appends JSON text to a byte array; one pass, no lookback.
private struct JSONWriter {
    let pretty: Bool
    var bytes: [UInt8] = []

    init(pretty: Bool) { self.pretty = pretty }

    mutating func write(_ value: JSON, depth: Int) {
        switch value {
        case .null:
            bytes += "null".utf8
        case .bool(let flag):
            bytes += (flag ? "true" : "false").utf8
        case .integer(let number):
            bytes += String(number).utf8
        case .bigInteger(let digits):
            bytes += digits.utf8
        case .double(let number):
            if number.isFinite { bytes += number.description.utf8 } else { bytes += "null".utf8 }
        case .string(let text):
            writeString(text)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                newline(depth + 1)
                write(element, depth: depth + 1)
            }
            if !elements.isEmpty { newline(depth) }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            bytes.append(UInt8(ascii: "{"))
            var first = true
            for (key, member) in object {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                newline(depth + 1)
                writeString(key)
                bytes.append(UInt8(ascii: ":"))
                if pretty { bytes.append(UInt8(ascii: " ")) }
                write(member, depth: depth + 1)
            }
            if !object.isEmpty { newline(depth) }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// In pretty mode: a line break and 2 spaces per level.
    private mutating func newline(_ depth: Int) {
        guard pretty else { return }
        bytes.append(UInt8(ascii: "\n"))
        bytes += repeatElement(UInt8(ascii: " "), count: 2 * depth)
    }

    /// A quoted string: runs of plain bytes copied at once, `"`, `\` and control characters escaped. Plain bytes
    /// are passed over eight at a time (`ByteWord`): a media token or a profile is mostly plain.
    private mutating func writeString(_ text: String) {
        var text = text
        bytes.append(UInt8(ascii: "\""))
        text.withUTF8 { utf8 in
            var runStart = 0
            var index = 0
            let count = utf8.count
            while index < count {
                if let start = utf8.baseAddress {
                    while index + 8 <= count,
                        !ByteWord.needsEscape(UnsafeRawPointer(start).loadUnaligned(fromByteOffset: index, as: UInt64.self))
                    {
                        index += 8
                    }
                    if index == count { break }
                }
                let byte = utf8[index]
                // One comparison for the plain bytes: 0x20 and above but `"` (0x22) and `\` (0x5C).
                if byte >= 0x20 && byte != 0x22 && byte != 0x5C {
                    index += 1
                    continue
                }
                bytes += UnsafeBufferPointer(rebasing: utf8[runStart..<index])
                appendEscape(byte)
                index += 1
                runStart = index
            }
            bytes += UnsafeBufferPointer(rebasing: utf8[runStart...])
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func appendEscape(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        default:
            let hex = Array("0123456789ABCDEF".utf8)
            bytes += [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
        }
    }
}

/// Eight bytes at once (a little-endian `UInt64` of a string's UTF-8): whether any needs attention, by the
/// "determine if a word has a byte less than n" and "has a zero byte" tests of Sean Eron Anderson's "Bit Twiddling
/// Hacks" page, which are exact for whether such a byte exists (not for which one it is).
public enum ByteWord {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// Whether a byte of `word` is below `limit` (at most 0x80).
    @inline(__always)
    public static func hasByte(below limit: UInt8, in word: UInt64) -> Bool {
        (word &- ones &* UInt64(limit)) & ~word & highBits != 0
    }

    /// Whether a byte of `word` equals `value`.
    @inline(__always)
    public static func hasByte(_ value: UInt8, in word: UInt64) -> Bool {
        let difference = word ^ (ones &* UInt64(value))
        return (difference &- ones) & ~difference & highBits != 0
    }

    /// Whether a byte of `word` must be escaped in a JSON string: a control character, `"` or `\`.
    @inline(__always)
    static func needsEscape(_ word: UInt64) -> Bool {
        hasByte(below: 0x20, in: word) || hasByte(0x22, in: word) || hasByte(0x5C, in: word)
    }
}
