import JSON

/// Compact JSON text written straight from a ``JSON`` value, for the per-message hot path.
///
/// Byte-for-byte the same output as `JSON.serialized()` (members in order, `/` unescaped, non-ASCII
/// as UTF-8, control characters as `\n`-style or `\u00XX` escapes, doubles in Swift's shortest
/// round-trip form, NaN and infinities as `null`), without building a jansson tree.
enum JSONWriter {
    static func append(_ value: JSON, to bytes: inout [UInt8]) {
        switch value {
        case .null: bytes += nullLiteral
        case .bool(let flag): bytes += flag ? trueLiteral : falseLiteral
        case .integer(let number): appendInteger(number, to: &bytes)
        case .bigInteger(let digits): bytes += digits.utf8
        case .double(let number):
            if number.isFinite { bytes += "\(number)".utf8 } else { bytes += nullLiteral }
        case .string(let text): appendString(text, to: &bytes)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                append(element, to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            bytes.append(UInt8(ascii: "{"))
            var first = true
            for (key, member) in object {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                appendString(key, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                append(member, to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// `{"code":…,"message":…[,"data":…]}` without building an intermediate object.
    static func append(_ error: ErrorObject, to bytes: inout [UInt8]) {
        bytes += codeKey
        appendInteger(Int64(error.code.rawValue), to: &bytes)
        bytes += messageKey
        appendString(error.message, to: &bytes)
        if let data = error.data {
            bytes += dataKey
            append(data, to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    static func appendInteger(_ number: Int64, to bytes: inout [UInt8]) {
        if number >= 0 && number < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(number))
            return
        }
        var magnitude = number.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for 20 digits, written backwards
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[23 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            if number < 0 { bytes.append(UInt8(ascii: "-")) }
            bytes += buffer[(24 - count)...]
        }
    }

    static func appendString(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        let plain = text.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            for byte in utf8 where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return false }
            bytes += utf8
            return true
        }
        if plain == true {
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0x08: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
            case 0x0C: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
            case 0..<0x20:
                let hex = Array("0123456789ABCDEF".utf8)
                bytes += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static let nullLiteral = Array("null".utf8)
    private static let trueLiteral = Array("true".utf8)
    private static let falseLiteral = Array("false".utf8)
    private static let codeKey = Array(#"{"code":"#.utf8)
    private static let messageKey = Array(#","message":"#.utf8)
    private static let dataKey = Array(#","data":"#.utf8)
}
