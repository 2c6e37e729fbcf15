@preconcurrency import CJansson

/// Why a text is not acceptable JSON, and where.
///
/// `offset` counts bytes from the start of the text; `line` and `column` are 1-based
/// (`column` counts Unicode scalars, as jansson does).
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var offset: Int
    public var line: Int
    public var column: Int

    public var description: String { "\(message) at line \(line), column \(column) (byte \(offset))" }
}

extension JSON {
    /// The deepest nesting of arrays and objects ``parse(_:maxDepth:)`` accepts by default.
    public static let defaultMaxDepth = 128

    /// Parses one JSON text (any value at the top level) through jansson.
    ///
    /// Rejects invalid UTF-8, trailing non-whitespace, duplicate object keys, lone surrogates and
    /// nesting deeper than `maxDepth`. Integers beyond Int64 become `.bigInteger` with their digits
    /// as written. `\u0000` inside strings is allowed.
    /// - Throws: ``JSONParseError`` with the byte offset, line and column of the fault.
    public static func parse(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSON {
        let scan = Scan(bytes)
        // Nesting deeper than maxDepth takes more than maxDepth bytes: short texts skip the scan.
        if bytes.count > maxDepth, let deep = scan.firstOffset(deeperThan: maxDepth) {
            throw scan.error("nesting deeper than \(maxDepth) levels", at: deep)
        }
        do {
            return try load(bytes, placeholders: [:])
        } catch let error where error.isNumericOverflow {
            // Only integer literals beyond Int64 are recovered; a real overflow stays an error.
            let rewrite = scan.replacingBigIntegers()
            guard !rewrite.placeholders.isEmpty else { throw error.parseError }
            let result = rewrite.text.withUnsafeBytes { bytes -> Result<JSON, JanssonError> in
                do throws(JanssonError) { return .success(try load(bytes, placeholders: rewrite.placeholders)) } catch {
                    return .failure(error)
                }
            }
            switch result {
            case .success(let value): return value
            case .failure(let failure): throw failure.parseError
            }
        } catch {
            throw error.parseError
        }
    }

    /// Parses UTF-8 bytes; see ``parse(_:maxDepth:)-(UnsafeRawBufferPointer,_)``.
    public static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSON {
        do {
            return try bytes.withUnsafeBytes { try parse($0, maxDepth: maxDepth) }
        } catch let error as JSONParseError {
            throw error
        } catch {
            fatalError("unreachable: parse throws only JSONParseError")
        }
    }

    /// Parses a string; see ``parse(_:maxDepth:)-(UnsafeRawBufferPointer,_)``.
    public static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSON {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }

    private static func load(_ bytes: UnsafeRawBufferPointer, placeholders: [String: String]) throws(JanssonError) -> JSON {
        var error = json_error_t()
        let flags = Int(JSON_REJECT_DUPLICATES) | Int(JSON_DECODE_ANY) | Int(JSON_ALLOW_NUL)
        let root = bytes.withMemoryRebound(to: CChar.self) { json_loadb($0.baseAddress, $0.count, flags, &error) }
        guard let root else { throw JanssonError(error, source: bytes) }
        defer { json_decref(root) }
        return JSON(jansson: root, placeholders: placeholders)
    }
}

/// A jansson load failure, kept raw until it is known whether the text gets a second try.
private struct JanssonError: Error {
    let code: Int
    let parseError: JSONParseError

    init(_ error: json_error_t, source: UnsafeRawBufferPointer) {
        var error = error
        code = Int(json_error_code(&error).rawValue)
        let text = withUnsafePointer(to: &error.text) {
            $0.withMemoryRebound(to: CChar.self, capacity: 160) { String(cString: $0) }
        }
        parseError = JSONParseError(message: text, offset: Int(error.position), line: Int(error.line), column: Int(error.column))
    }

    var isNumericOverflow: Bool { code == Int(json_error_numeric_overflow.rawValue) }
}

/// Which bytes of a JSON text lie inside strings, fed one byte at a time.
private struct StringTracker {
    private var inString = false
    private var escaped = false

    /// Takes the next byte; true when it is part of a string literal, its quotes included.
    mutating func consume(_ byte: UInt8) -> Bool {
        if inString {
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
            }
            return true
        }
        inString = byte == UInt8(ascii: "\"")
        return inString
    }
}

/// A light pass over the raw text that knows where strings are, so nesting and number
/// literals can be found without a second JSON parser.
private struct Scan {
    let bytes: UnsafeRawBufferPointer

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// Byte offset of the first `[` or `{` that opens level `limit + 1`, if any.
    func firstOffset(deeperThan limit: Int) -> Int? {
        var depth = 0
        var strings = StringTracker()
        for (offset, byte) in bytes.enumerated() {
            if strings.consume(byte) { continue }
            switch byte {
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > limit { return offset }
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return nil
    }

    /// The text with every integer literal outside Int64 replaced by a unique placeholder string.
    func replacingBigIntegers() -> (text: [UInt8], placeholders: [String: String]) {
        let nonce = String(UInt64.random(in: .min ... .max), radix: 36)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count + 32)
        var placeholders: [String: String] = [:]
        var index = 0
        var strings = StringTracker()
        while index < bytes.count {
            let byte = bytes[index]
            if !strings.consume(byte), byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                var end = index + 1
                while end < bytes.count, Scan.isNumberByte(bytes[end]) { end += 1 }
                let literal = String(decoding: bytes[index..<end], as: UTF8.self)
                if Scan.isBigInteger(literal) {
                    let placeholder = "\u{1}bigint-\(nonce)-\(placeholders.count)"
                    placeholders[placeholder] = literal
                    text.append(contentsOf: JSON.string(placeholder).serialized())
                } else {
                    text.append(contentsOf: bytes[index..<end])
                }
                index = end
                continue
            }
            text.append(byte)
            index += 1
        }
        return (text, placeholders)
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "e"),
            UInt8(ascii: "E"):
            return true
        default:
            return false
        }
    }

    /// True for a well-formed JSON integer literal that Int64 cannot hold.
    private static func isBigInteger(_ literal: String) -> Bool {
        let digits = literal.hasPrefix("-") ? literal.dropFirst() : Substring(literal)
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return false }
        guard digits.count == 1 || !digits.hasPrefix("0") else { return false }
        return Int64(literal) == nil
    }

    func error(_ message: String, at offset: Int) -> JSONParseError {
        var line = 1
        var column = 1
        for byte in bytes[..<offset] {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return JSONParseError(message: message, offset: offset, line: line, column: column)
    }
}

extension JSON {
    /// Copies a jansson tree into a Swift value; strings equal to a placeholder become `.bigInteger`.
    init(jansson value: UnsafeMutablePointer<json_t>, placeholders: [String: String]) {
        switch value.pointee.type {
        case JSON_OBJECT:
            var object = JSONObject()
            object.reserveCapacity(json_object_size(value))
            var iterator = json_object_iter(value)
            while let current = iterator {
                let keyPointer = json_object_iter_key(current)!
                let keyLength = json_object_iter_key_len(current)
                let key = keyPointer.withMemoryRebound(to: UInt8.self, capacity: keyLength) {
                    String(decoding: UnsafeBufferPointer(start: $0, count: keyLength), as: UTF8.self)
                }
                object[key] = JSON(jansson: json_object_iter_value(current), placeholders: placeholders)
                iterator = json_object_iter_next(value, current)
            }
            self = .object(object)
        case JSON_ARRAY:
            let count = json_array_size(value)
            var elements: [JSON] = []
            elements.reserveCapacity(count)
            for index in 0..<count {
                elements.append(JSON(jansson: json_array_get(value, index), placeholders: placeholders))
            }
            self = .array(elements)
        case JSON_STRING:
            let length = json_string_length(value)
            let string = json_string_value(value)!.withMemoryRebound(to: UInt8.self, capacity: length) {
                String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
            }
            if !placeholders.isEmpty, let digits = placeholders[string] {
                self = .bigInteger(digits)
            } else {
                self = .string(string)
            }
        case JSON_INTEGER:
            self = .integer(Int64(json_integer_value(value)))
        case JSON_REAL:
            self = .double(json_real_value(value))
        case JSON_TRUE:
            self = .bool(true)
        case JSON_FALSE:
            self = .bool(false)
        default:
            self = .null
        }
    }
}
