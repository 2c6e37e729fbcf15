@preconcurrency import CJansson
import Glibc

/// Why a text was not turned into a value, and where.
///
/// `offset` counts bytes from the start of the text; `line` and `column` are 1-based
/// (`column` counts Unicode scalars, as jansson does). `kind` tells a text that is not JSON from valid
/// JSON that this parser refuses; `message` is one line naming the fault.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The two ways a text can fail.
    public enum Kind: Sendable, Equatable {
        /// Not a JSON text this parser reads: a syntax error, trailing bytes, empty text, invalid UTF-8, a
        /// leading UTF-8 byte order mark, a raw NUL byte, or a value past its limits (nesting deeper than
        /// `maxDepth`, a number beyond the range of a double, an escaped lone surrogate).
        case invalidText
        /// Valid JSON (RFC 8259) that this parser refuses: an object that repeats a member name, or a member
        /// name holding U+0000. The whole text was checked and is otherwise accepted; `message` names the
        /// member.
        case refusedMemberName
    }

    public var message: String
    /// The bytes read when the parser stopped: just past the token `message` names (jansson's `position`).
    public var offset: Int
    public var line: Int
    public var column: Int
    public var kind: Kind = .invalidText

    public var description: String { "\(message) at line \(line), column \(column) (byte \(offset))" }
}

extension JSON {
    /// The deepest nesting of arrays and objects ``parse(_:maxDepth:)`` accepts by default.
    public static let defaultMaxDepth = 128

    /// Parses one JSON text (any value at the top level): through jansson, or, for the common text that jansson
    /// would read alike, in one pass of Swift (`JSONFastParser`).
    ///
    /// Accepts what RFC 8259 calls a JSON text, with these limits, all thrown as ``JSONParseError/Kind/invalidText``:
    /// no raw NUL byte anywhere (checked first, so it is never taken for the end of input), no UTF-8 byte
    /// order mark, no escaped lone surrogate (`"\ud800"`), no double beyond its range (`1e400`; `1e-400` is 0),
    /// nesting at most `maxDepth` deep. Integers beyond Int64 become `.bigInteger` with their digits as
    /// written (`-0` is the integer 0, `-0.0` the double). `\u0000` inside string values is allowed.
    ///
    /// An object that repeats a member name, or a member name holding `\u0000`, is valid JSON that this parser
    /// refuses: it throws ``JSONParseError/Kind/refusedMemberName`` (with the member in `message`) only when the
    /// rest of the text is valid too, and ``JSONParseError/Kind/invalidText`` for the first real fault otherwise.
    /// - Throws: ``JSONParseError`` with the byte offset, line and column of the fault.
    public static func parse(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSON {
        guard !bytes.isEmpty else {
            throw JSONParseError(message: "empty text, where a JSON value was expected", offset: 0, line: 1, column: 1)
        }
        if let value = JSONFastParser.parse(bytes, maxDepth: maxDepth) { return value }
        return try parseThroughJansson(bytes, maxDepth: maxDepth)
    }

    /// ``parse(_:maxDepth:)-(UnsafeRawBufferPointer,_)`` of a non-empty text, through jansson alone.
    static func parseThroughJansson(_ bytes: UnsafeRawBufferPointer, maxDepth: Int) throws(JSONParseError) -> JSON {
        let scan = Scan(bytes)
        if let nul = scan.firstNULByte() {
            throw scan.error("raw NUL byte (0x00), which is never valid in JSON text", at: nul)
        }
        // jansson's own reason would quote the mark, which no one can see.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            throw scan.error("UTF-8 byte order mark (EF BB BF, U+FEFF) in front of the JSON text", at: 0)
        }
        // Nesting deeper than maxDepth takes more than maxDepth bytes: short texts skip the scan.
        if bytes.count > maxDepth, let deep = scan.firstOffset(deeperThan: maxDepth) {
            throw scan.error("nesting deeper than \(maxDepth) levels", at: deep)
        }
        let outcome = loading(bytes, uniqueNames: true) { text, outcome -> Result<JSON, JSONParseError> in
            outcome.mapError { error in error.isRefusedMemberName ? refusal(error, in: text) : error.parseError }
        }
        return try outcome.get()
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

    /// One jansson load; `uniqueNames: false` lets a repeated member name through (the last value wins).
    private static func load(
        _ bytes: UnsafeRawBufferPointer, placeholders: [String: String], uniqueNames: Bool
    ) throws(JanssonError) -> JSON {
        var error = json_error_t()
        let flags = (uniqueNames ? Int(JSON_REJECT_DUPLICATES) : 0) | Int(JSON_DECODE_ANY) | Int(JSON_ALLOW_NUL)
        let root = bytes.withMemoryRebound(to: CChar.self) { json_loadb($0.baseAddress, $0.count, flags, &error) }
        guard let root else { throw JanssonError(error, source: bytes) }
        defer { json_decref(root) }
        return JSON(jansson: root, placeholders: placeholders)
    }

    /// Loads `bytes` and hands `finish` the text jansson read last and its outcome: when an integer literal is
    /// beyond Int64, that text is a copy with each such literal as a placeholder string, loaded again.
    private static func loading<T>(
        _ bytes: UnsafeRawBufferPointer, uniqueNames: Bool, _ finish: (UnsafeRawBufferPointer, Result<JSON, JanssonError>) -> T
    ) -> T {
        let first = Result { () throws(JanssonError) in try load(bytes, placeholders: [:], uniqueNames: uniqueNames) }
        guard case .failure(let error) = first, error.isNumericOverflow else { return finish(bytes, first) }
        // Only integer literals beyond Int64 are recovered; a real overflow stays an error.
        let rewrite = Scan(bytes).replacingBigIntegers()
        guard !rewrite.placeholders.isEmpty else { return finish(bytes, first) }
        return rewrite.text.withUnsafeBytes { text in
            finish(text, Result { () throws(JanssonError) in try load(text, placeholders: rewrite.placeholders, uniqueNames: uniqueNames) })
        }
    }

    /// The error for a member name jansson refused (`failure`) in `bytes`: ``JSONParseError/Kind/refusedMemberName``
    /// naming the member when the whole text is otherwise valid, else the first real fault as
    /// ``JSONParseError/Kind/invalidText``.
    ///
    /// jansson stops at the first such name, so the rest is checked by loading the text again, letting repeated
    /// names through, from a copy in which each `\u0000` escape reads `\u0001` (as long, so offsets hold).
    private static func refusal(_ failure: JanssonError, in bytes: UnsafeRawBufferPointer) -> JSONParseError {
        let scan = Scan(bytes)
        let fault = scan.replacingNULEscapes().withUnsafeBytes { copy in
            loading(copy, uniqueNames: false) { _, outcome -> JSONParseError? in
                if case .failure(let error) = outcome { return error.parseError }
                return nil
            }
        }
        if let fault { return fault }
        var refused = failure.parseError
        refused.kind = .refusedMemberName
        // jansson reports the offset just past the name's closing quote.
        let name = scan.stringLiteral(endingAt: refused.offset - 1).flatMap { literal in
            (try? load(UnsafeRawBufferPointer(rebasing: bytes[literal]), placeholders: [:], uniqueNames: true))?.stringValue
        }
        let quoted = name.map { " " + JSON.string(Scan.shortened($0)).serializedString() } ?? ""
        refused.message =
            failure.isDuplicateName
            ? "duplicate member name\(quoted) (valid JSON that this parser refuses)"
            : "member name\(quoted) holds U+0000 (valid JSON that this parser refuses)"
        return refused
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
        parseError = JSONParseError(
            message: Self.visible(text), offset: Int(error.position), line: Int(error.line), column: Int(error.column))
    }

    /// jansson's reason with the invisible characters it may quote (`near '…'`: a byte order mark, a zero-width
    /// space, a control character) written as `U+FEFF`.
    private static func visible(_ text: String) -> String {
        var shown = ""
        for scalar in text.unicodeScalars {
            let invisible = scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.properties.generalCategory == .format
            guard invisible else {
                shown.unicodeScalars.append(scalar)
                continue
            }
            let hex = String(scalar.value, radix: 16, uppercase: true)
            shown += "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }
        return shown
    }

    var isNumericOverflow: Bool { code == Int(json_error_numeric_overflow.rawValue) }

    /// A repeated member name, or one holding U+0000: jansson stopped there, so the rest is unchecked.
    var isRefusedMemberName: Bool {
        code == Int(json_error_duplicate_key.rawValue) || code == Int(json_error_null_byte_in_key.rawValue)
    }

    var isDuplicateName: Bool { code == Int(json_error_duplicate_key.rawValue) }
}

/// Which bytes of a JSON text lie inside strings, fed one byte at a time.
private struct StringTracker {
    /// Whether the last byte consumed lies inside a string literal (its opening quote included).
    private(set) var inString = false
    /// Whether the last byte consumed is a backslash that starts an escape.
    private(set) var escaped = false

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

    /// Byte offset of the first raw NUL byte (0x00), if any.
    func firstNULByte() -> Int? {
        guard let base = bytes.baseAddress, let found = memchr(base, 0, bytes.count) else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }

    /// A copy of the text in which every `\u0000` escape inside a string reads `\u0001`; nothing else changes.
    func replacingNULEscapes() -> [UInt8] {
        var text = Array(bytes)
        var strings = StringTracker()
        let escape = Array(#"\u0000"#.utf8)
        for offset in bytes.indices {
            guard strings.consume(bytes[offset]), strings.escaped, text[offset...].starts(with: escape) else { continue }
            text[offset + 5] = UInt8(ascii: "1")
        }
        return text
    }

    /// The bytes of the string literal (quotes included) whose closing quote is at `offset`, if one is.
    func stringLiteral(endingAt offset: Int) -> Range<Int>? {
        guard offset >= 0, offset < bytes.count else { return nil }
        var strings = StringTracker()
        var start = 0
        for (index, byte) in bytes[...offset].enumerated() {
            let wasInside = strings.inString
            _ = strings.consume(byte)
            if !wasInside && strings.inString { start = index }
        }
        let closed = !strings.inString && bytes[offset] == UInt8(ascii: "\"")
        return closed ? start..<(offset + 1) : nil
    }

    /// `name` cut to its first 64 characters (with `…`), for a message.
    static func shortened(_ name: String) -> String {
        name.count > 64 ? name.prefix(64) + "…" : name
    }

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
    /// True when the first byte at or after `offset` that is not JSON whitespace is `:`.
    private func followedByColon(_ offset: Int) -> Bool {
        var index = offset
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        return index < bytes.count && bytes[index] == UInt8(ascii: ":")
    }

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
                // A literal followed by `:` stands where a member name must be a string: left as written, so the
                // text stays invalid instead of the placeholder string making it a valid name.
                if Scan.isBigInteger(literal), !followedByColon(end) {
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
