/// The common case of ``JSON/parse(_:maxDepth:)-(UnsafeRawBufferPointer,_)`` in one pass of Swift: a text that is
/// plainly valid and within the limits, with ASCII strings (escapes included, but for `\u0000` and surrogates),
/// integers of at most 18 digits and finite doubles, and no repeated member name, gives the value jansson would
/// give. Anything else gives nil, and the text goes to jansson, whose answer (the value, or the error with its
/// position) stands: this parser never rejects a text, it only declines it.
///
/// Why: jansson copies every byte of a string through its lexer buffer twice and builds a tree that is then copied
/// into `JSON`; a REST API V2 decision (a media token of a kilobyte) cost about 200,000 instructions to read that
/// way, and about 20,000 this way.
struct JSONFastParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private let maxDepth: Int
    private var offset = 0
    /// The members and elements of the objects and arrays being read, the innermost's last: each one's are copied
    /// into an array of their exact count when it ends, where growing an array per object and per array was a
    /// dozen reallocations for a REST API V2 decision. They are popped one by one when a container ends
    /// (`removeLast(_:)` goes through the generic `replaceSubrange`: 1,400 instructions more per getAuthorization).
    /// A text declined halfway leaves them as they are: the parser is dropped with them.
    private var members: [(key: String, value: JSON)] = []
    private var elements: [JSON] = []

    private init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
        members.reserveCapacity(16)
        elements.reserveCapacity(16)
    }

    /// The value of `text`, or nil when this parser declines it.
    static func parse(_ text: UnsafeRawBufferPointer, maxDepth: Int) -> JSON? {
        text.withMemoryRebound(to: UInt8.self) { bytes -> JSON? in
            var parser = JSONFastParser(bytes, maxDepth: maxDepth)
            guard let value = parser.value(depth: 0) else { return .none }
            parser.skipWhitespace()
            // (`.none`, not `nil`: JSON itself is nil-expressible.)
            return parser.offset == bytes.count ? .some(value) : .none
        }
    }

    private mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0A, 0x0D: offset += 1
            default: return
            }
        }
    }

    private mutating func value(depth: Int) -> JSON? {
        skipWhitespace()
        guard offset < bytes.count else { return nil }
        switch bytes[offset] {
        case UInt8(ascii: "{"): return depth < maxDepth ? object(depth: depth + 1) : nil
        case UInt8(ascii: "["): return depth < maxDepth ? array(depth: depth + 1) : nil
        case UInt8(ascii: "\""): return string().map(JSON.string)
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        default: return number()
        }
    }

    private mutating func literal(_ word: StaticString, _ value: JSON) -> JSON? {
        let count = word.utf8CodeUnitCount
        guard bytes.count - offset >= count else { return nil }
        for index in 0..<count where bytes[offset + index] != word.utf8Start[index] { return nil }
        offset += count
        return value
    }

    private mutating func object(depth: Int) -> JSON? {
        offset += 1
        skipWhitespace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") {
            offset += 1
            return .object(JSONObject())
        }
        let base = members.count
        // The names read so far, once there are more than a linear search should look through.
        var names: Set<MemberName>?
        while true {
            skipWhitespace()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\""), let key = string() else { return nil }
            if names != nil {
                guard names!.insert(MemberName(key)).inserted else { return nil }
            } else {
                for index in base..<members.count where MemberName.same(members[index].key, key) { return nil }
                if members.count - base == JSONObject.indexThreshold {
                    names = Set(members[base...].lazy.map { MemberName($0.key) })
                    names!.insert(MemberName(key))
                }
            }
            skipWhitespace()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: ":") else { return nil }
            offset += 1
            guard let member = value(depth: depth) else { return nil }
            members.append((key, member))
            skipWhitespace()
            guard offset < bytes.count else { return nil }
            switch bytes[offset] {
            case UInt8(ascii: ","): offset += 1
            case UInt8(ascii: "}"):
                offset += 1
                let object = JSONObject(distinctMembers: members[base...])
                while members.count > base { members.removeLast() }
                return .object(object)
            default: return nil
            }
        }
    }

    private mutating func array(depth: Int) -> JSON? {
        offset += 1
        skipWhitespace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "]") {
            offset += 1
            return .array([])
        }
        let base = elements.count
        while true {
            guard let element = value(depth: depth) else { return nil }
            elements.append(element)
            skipWhitespace()
            guard offset < bytes.count else { return nil }
            switch bytes[offset] {
            case UInt8(ascii: ","): offset += 1
            case UInt8(ascii: "]"):
                offset += 1
                let array = Array(elements[base...])
                while elements.count > base { elements.removeLast() }
                return .array(array)
            default: return nil
            }
        }
    }

    /// A string literal at `offset` (its opening quote); nil for non-ASCII bytes, control characters, `\u0000`
    /// and surrogate escapes (jansson decides those).
    ///
    /// A string's plain bytes are passed over eight at a time (`ByteWord`) up to the first word that holds the
    /// quote, an escape, a control character or a non-ASCII byte, and byte by byte from there (each of those ends
    /// this pass): a media token is a kilobyte of plain bytes.
    private mutating func string() -> String? {
        offset += 1
        let start = offset
        if let base = bytes.baseAddress {
            while offset + 8 <= bytes.count {
                let word = UnsafeRawPointer(base + offset).loadUnaligned(as: UInt64.self)
                if ByteWord.needsEscape(word) || word & 0x8080_8080_8080_8080 != 0 { break }
                offset += 8
            }
        }
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
                offset += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { return escapedString(from: start) }
            guard byte >= 0x20, byte < 0x80 else { return nil }
            offset += 1
        }
        return nil
    }

    /// The rest of a string that holds an escape: the plain run before `offset` copied, then byte by byte.
    private mutating func escapedString(from start: Int) -> String? {
        var text = Array(bytes[start..<offset])
        while offset < bytes.count {
            let byte = bytes[offset]
            offset += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: text, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard offset < bytes.count else { return nil }
                let escape = bytes[offset]
                offset += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escape)
                case UInt8(ascii: "b"): text.append(0x08)
                case UInt8(ascii: "f"): text.append(0x0C)
                case UInt8(ascii: "n"): text.append(0x0A)
                case UInt8(ascii: "r"): text.append(0x0D)
                case UInt8(ascii: "t"): text.append(0x09)
                case UInt8(ascii: "u"):
                    guard let scalar = hexScalar(), scalar != 0, !(0xD800...0xDFFF).contains(scalar) else { return nil }
                    text += String(Character(Unicode.Scalar(scalar)!)).utf8
                default: return nil
                }
            default:
                guard byte >= 0x20, byte < 0x80 else { return nil }
                text.append(byte)
            }
        }
        return nil
    }

    /// The four hex digits of a `\u` escape.
    private mutating func hexScalar() -> UInt32? {
        guard bytes.count - offset >= 4 else { return nil }
        var scalar: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[offset]
            offset += 1
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            scalar = scalar << 4 | UInt32(digit)
        }
        return scalar
    }

    /// A number as RFC 8259 writes it: an integer of at most 18 digits is `.integer`, one with a fraction or an
    /// exponent a finite `.double` (read as jansson reads it, correctly rounded); anything else is declined.
    private mutating func number() -> JSON? {
        let start = offset
        if bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        let digitsStart = offset
        guard let first = digit() else { return nil }
        if first != 0 { while digit() != nil {} }
        let integerDigits = offset - digitsStart
        var isInteger = true
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            offset += 1
            guard digit() != nil else { return nil }
            while digit() != nil {}
            isInteger = false
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            guard digit() != nil else { return nil }
            while digit() != nil {}
            isInteger = false
        }
        if isInteger {
            guard integerDigits <= 18 else { return nil }
            var value: Int64 = 0
            for index in digitsStart..<offset { value = value * 10 + Int64(bytes[index] - UInt8(ascii: "0")) }
            return .integer(bytes[start] == UInt8(ascii: "-") ? -value : value)
        }
        let literal = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
        guard let double = Double(literal), double.isFinite else { return nil }
        return .double(double)
    }

    private mutating func digit() -> UInt8? {
        guard offset < bytes.count, bytes[offset] >= UInt8(ascii: "0"), bytes[offset] <= UInt8(ascii: "9") else { return nil }
        defer { offset += 1 }
        return bytes[offset] - UInt8(ascii: "0")
    }
}
