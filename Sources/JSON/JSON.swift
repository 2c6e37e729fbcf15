/// A JSON value (RFC 8259).
///
/// Numbers keep their exactness: integers that fit 64 bits are `.integer`, other integer
/// literals (such as `18446744073709551617`) stay `.bigInteger` with their digits exactly as
/// received, so an id can be echoed byte for byte. Objects keep their members in insertion order.
/// Parse with ``JSON/parse(_:maxDepth:)``; serialize with ``JSON/serialized(pretty:)``.
public enum JSON: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    /// An integer literal outside the Int64 range, as written (optional `-`, then digits).
    case bigInteger(String)
    case double(Double)
    case string(String)
    case array([JSON])
    case object(JSONObject)
}

extension JSON {
    /// The member named `key` when this is an object, else nil.
    public subscript(key: String) -> JSON? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The value as Int64 when it is an integer, or a double with no fractional part in range.
    public var int64Value: Int64? {
        switch self {
        case .integer(let value): return value
        case .double(let value) where value.rounded() == value && abs(value) < 9.2e18: return Int64(value)
        default: return nil
        }
    }

    public var intValue: Int? { int64Value.map { Int($0) } }

    /// The value as Double for any number (big integers lose precision).
    public var doubleValue: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .double(let value): return value
        case .bigInteger(let digits): return Double(digits)
        default: return nil
        }
    }

    public var arrayValue: [JSON]? {
        if case .array(let value) = self { return value }
        return nil
    }

    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    public var isNumber: Bool {
        switch self {
        case .integer, .bigInteger, .double: return true
        default: return false
        }
    }

    /// The JSON type name used in error messages: `null`, `boolean`, `number`, `string`, `array`, `object`.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .integer, .bigInteger, .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

extension JSON: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(JSONObject(elements))
    }
}

extension JSON: CustomStringConvertible {
    /// Compact JSON text.
    public var description: String { serializedString() }
}

/// A member name compared as RFC 8259 section 8.3 compares names, character by character once escapes are read
/// (here: by UTF-8 bytes), where Swift's `String` equality would make canonically equivalent names one
/// (`"\u{E9}"` and `"e\u{301}"`, `K` and the Kelvin sign U+212A). Protocol/README.md, "What counts as JSON".
struct MemberName: Hashable {
    let text: String

    init(_ text: String) { self.text = text }

    @inline(__always)
    static func same(_ a: String, _ b: String) -> Bool {
        // Equal bytes make equal `String`s, so `String`'s inequality settles most comparisons. An ASCII name (as
        // many UTF-16 units as bytes, a count the string keeps) that `String` finds equal to one of the same length is
        // the same bytes: every other character whose canonical decomposition is ASCII (the Kelvin sign, U+037E,
        // U+1FEF) is a single character taking more bytes. Only a non-ASCII name is compared again, byte by byte.
        guard a == b, a.utf8.count == b.utf8.count else { return false }
        return a.utf8.count == a.utf16.count || a.utf8.elementsEqual(b.utf8)
    }

    static func == (a: MemberName, b: MemberName) -> Bool { same(a.text, b.text) }

    /// `String`'s own hash: names with the same bytes hash alike, which is all `==` needs.
    func hash(into hasher: inout Hasher) { hasher.combine(text) }
}

/// A JSON object: members in insertion order.
///
/// Lookups scan the members, which beats hashing for the small objects of a protocol; objects of more than
/// ``JSONObject/indexThreshold`` members also keep a name index. Names are told apart by their characters
/// (`MemberName`). Equality and hashing ignore member order, as RFC 8259 does.
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// Member count above which lookups go through a dictionary index.
    public static let indexThreshold = 16

    private var members: [(key: String, value: JSON)] = []
    private var index: [MemberName: Int]?

    public init() {}

    /// Builds an object from pairs; a repeated key keeps its first position and its last value.
    public init<S: Sequence>(_ members: S) where S.Element == (String, JSON) {
        self.members.reserveCapacity(members.underestimatedCount)
        for (key, value) in members { self[key] = value }
    }

    public init(dictionaryLiteral elements: (String, JSON)...) { self.init(elements) }

    /// An object of `members`, whose names the caller has checked are distinct (the parser).
    init(distinctMembers: ArraySlice<(key: String, value: JSON)>) {
        members = Array(distinctMembers)
        if members.count > Self.indexThreshold { rebuildIndex() }
    }

    /// An object of `members` in their order, whose names the caller knows are distinct (a shape written out in
    /// code): no name is looked up, where a dictionary literal looks up each name among those before it.
    public init(distinct members: [(key: String, value: JSON)]) {
        assert(Set(members.map { MemberName($0.key) }).count == members.count, "repeated member names")
        self.init(distinctMembers: members[...])
    }

    public var count: Int { members.count }

    /// Room for `count` members without reallocating.
    public mutating func reserveCapacity(_ count: Int) { members.reserveCapacity(count) }

    public var isEmpty: Bool { members.isEmpty }
    public var keys: [String] { members.map(\.key) }

    /// The member's value; assigning nil removes the member.
    public subscript(key: String) -> JSON? {
        get { position(of: key).map { members[$0].value } }
        set {
            let existing = position(of: key)
            switch (existing, newValue) {
            case (let position?, let value?):
                members[position].value = value
            case (nil, let value?):
                members.append((key, value))
                if index != nil {
                    index![MemberName(key)] = members.count - 1
                } else if members.count > JSONObject.indexThreshold {
                    rebuildIndex()
                }
            case (let position?, nil):
                members.remove(at: position)
                if index != nil { rebuildIndex() }
            case (nil, nil):
                break
            }
        }
    }

    private func position(of key: String) -> Int? {
        if let index { return index[MemberName(key)] }
        return members.firstIndex { MemberName.same($0.key, key) }
    }

    private mutating func rebuildIndex() {
        var built: [MemberName: Int] = [:]
        for (position, member) in members.enumerated() { built[MemberName(member.key)] = position }
        index = built
    }

    public func makeIterator() -> IndexingIterator<[(key: String, value: JSON)]> { members.makeIterator() }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.count == rhs.count && lhs.members.allSatisfy { rhs[$0.key] == $0.value }
    }

    public func hash(into hasher: inout Hasher) {
        // Order-independent: the members' own hashes, combined commutatively.
        var combined = 0
        for member in members {
            var memberHasher = Hasher()
            memberHasher.combine(member.key)
            memberHasher.combine(member.value)
            combined ^= memberHasher.finalize()
        }
        hasher.combine(count)
        hasher.combine(combined)
    }
}
