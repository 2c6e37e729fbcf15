import JSON
import XCTest

final class JSONTests: XCTestCase {
    func testRoundTripKeepsMemberOrderAndUnicode() throws {
        let text = #"{"z":1,"a":"héllo ✓ 😀","m":[true,false,null],"s":"a/b"}"#
        XCTAssertEqual(try JSON.parse(text).serializedString(), text)
    }

    func testIntegersStayExact() throws {
        for literal in [
            "9007199254740993", "9223372036854775807", "-9223372036854775808", "18446744073709551617", "-99999999999999999999999",
        ] {
            let value = try JSON.parse("{\"id\":\(literal)}")
            XCTAssertEqual(value.serializedString(), "{\"id\":\(literal)}")
        }
        XCTAssertEqual(try JSON.parse("18446744073709551617"), .bigInteger("18446744073709551617"))
        XCTAssertEqual(try JSON.parse("[9007199254740993]"), [.integer(9_007_199_254_740_993)])
    }

    func testLargeValuesSerializeWhole() throws {
        let long = String(repeating: "é", count: 3000)
        let value: JSON = ["text": .string(long), "list": .array((0..<500).map { .integer($0) })]
        let text = value.serializedString()
        XCTAssertEqual(text.utf8.count, 7910)
        XCTAssertEqual(try JSON.parse(text), value)
    }

    func testDoublesUseShortestForm() throws {
        XCTAssertEqual(JSON.double(0.1).serializedString(), "0.1")
        XCTAssertEqual(try JSON.parse("[1.5,-2e-3]").serializedString(), "[1.5,-0.002]")
        XCTAssertEqual(JSON.double(.nan).serializedString(), "null")
    }

    func testErrorsCarryPosition() {
        func failure(_ text: String) -> JSONParseError? {
            do { _ = try JSON.parse(text); return nil } catch { return error }
        }
        let syntax = failure("{\n  \"a\": 1,\n  \"b\": tru\n}")
        XCTAssertEqual(syntax?.line, 3)
        XCTAssertEqual(syntax?.offset, 22)
        XCTAssertEqual(failure(#"{"a":1,"a":2}"#)?.message.contains("duplicate"), true)
        XCTAssertNotNil(failure(#"{"a":1} x"#))
        XCTAssertNotNil(failure("[1e400]"))
        XCTAssertNotNil(failure("\"\\ud83d\""))
        let invalidUTF8 = [UInt8(ascii: "\""), 0xC3, 0x28, UInt8(ascii: "\"")]
        XCTAssertThrowsError(try JSON.parse(invalidUTF8))
        let deep = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        let depthError = failure(deep)
        XCTAssertEqual(depthError?.offset, JSON.defaultMaxDepth)
        XCTAssertEqual(depthError?.column, JSON.defaultMaxDepth + 1)
        XCTAssertNoThrow(try JSON.parse(deep, maxDepth: 200))
    }

    func testStringsWithNULAndControlCharacters() throws {
        let value = try JSON.parse(#""a\u0000b\u0001""#)
        XCTAssertEqual(value, .string("a\u{0}b\u{1}"))
        XCTAssertEqual(value.serializedString(), #""a\u0000b\u0001""#)
    }

    func testObjectsSmallAndLargeKeepOrderAndFindMembers() {
        for size in [3, JSONObject.indexThreshold + 5] {
            var object = JSONObject()
            for n in 0..<size { object["k\(n)"] = .integer(Int64(n)) }
            object["k1"] = "replaced"
            object["k0"] = nil
            XCTAssertEqual(object.count, size - 1)
            XCTAssertEqual(object.keys.first, "k1")
            XCTAssertEqual(object["k1"], "replaced")
            XCTAssertNil(object["k0"])
            XCTAssertEqual(object["k\(size - 1)"], .integer(Int64(size - 1)))
            let reversed = JSONObject(object.reversed().map { ($0.key, $0.value) })
            XCTAssertEqual(reversed, object)
            XCTAssertEqual(reversed.hashValue, object.hashValue)
            XCTAssertEqual(reversed.keys.last, "k1")
        }
    }

    func testAccessors() throws {
        let value = try JSON.parse(#"{"n":3,"s":"x","b":true,"a":[1],"o":{}}"#)
        XCTAssertEqual(value["n"]?.intValue, 3)
        XCTAssertEqual(value["s"]?.stringValue, "x")
        XCTAssertEqual(value["b"]?.boolValue, true)
        XCTAssertEqual(value["a"]?.arrayValue?.count, 1)
        XCTAssertEqual(value["o"]?.objectValue?.isEmpty, true)
        XCTAssertNil(value["missing"])
        XCTAssertEqual(value["b"]?.typeName, "boolean")
    }
}

/// The word-at-a-time string writer and header check against byte-by-byte references, with every byte that needs
/// attention at every position of strings longer and shorter than a word.
final class ByteWordTests: XCTestCase {
    static func escapedByteByByte(_ text: String) -> String {
        var out = Array("\"".utf8)
        for byte in text.utf8 {
            switch byte {
            case 0x22: out += Array("\\\"".utf8)
            case 0x5C: out += Array("\\\\".utf8)
            case 0x08: out += Array("\\b".utf8)
            case 0x0C: out += Array("\\f".utf8)
            case 0x0A: out += Array("\\n".utf8)
            case 0x0D: out += Array("\\r".utf8)
            case 0x09: out += Array("\\t".utf8)
            case ..<0x20: out += Array(("\\u00" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true)).utf8)
            default: out.append(byte)
            }
        }
        return String(decoding: out + Array("\"".utf8), as: UTF8.self)
    }

    func testStringsAreEscapedAsByteByByte() {
        let specials: [UInt8] = [0x00, 0x01, 0x09, 0x0A, 0x1F, 0x22, 0x5C, 0x20, 0x21, 0x23, 0x5B, 0x5D, 0x7F]
        for length in [0, 1, 7, 8, 9, 15, 16, 17, 31, 33] {
            for position in 0..<max(length, 1) {
                for special in specials {
                    var bytes = Array(repeating: UInt8(ascii: "a"), count: length)
                    if length > 0 { bytes[position] = special }
                    let text = String(decoding: bytes, as: UTF8.self)
                    XCTAssertEqual(String(decoding: JSON.string(text).serialized(), as: UTF8.self), Self.escapedByteByByte(text))
                }
            }
        }
        let mixed = "é\"ü\\x\u{1}€😀 tab\there and a longer plain tail of text"
        XCTAssertEqual(String(decoding: JSON.string(mixed).serialized(), as: UTF8.self), Self.escapedByteByByte(mixed))
    }

    func testTheWordTestsFindEveryByteBelowAndEqual() {
        for position in 0..<8 {
            for byte in 0...255 {
                let word = UInt64(0x4141_4141_4141_4141) & ~(UInt64(0xFF) << (8 * position)) | UInt64(byte) << (8 * position)
                XCTAssertEqual(ByteWord.hasByte(below: 0x20, in: word), byte < 0x20, "\(byte) at \(position)")
                XCTAssertEqual(ByteWord.hasByte(0x7F, in: word), byte == 0x7F, "\(byte) at \(position)")
            }
        }
    }
}

/// `JSONObject(distinct:)`: a shape written out in code, taken in its order with no name looked up.
final class JSONObjectDistinctTests: XCTestCase {
    func testKeepsTheOrderAndReadsLikeALiteral() {
        let made = JSONObject(distinct: [("b", 1), ("a", "x"), ("c", .null)])
        let literal: JSONObject = ["b": 1, "a": "x", "c": .null]
        XCTAssertEqual(made, literal)
        XCTAssertEqual(made.keys, ["b", "a", "c"])
        XCTAssertEqual(made["a"], "x")
        XCTAssertEqual(String(decoding: JSON.object(made).serialized(), as: UTF8.self), #"{"b":1,"a":"x","c":null}"#)
        // Past the index threshold, names are found through the index.
        let many = JSONObject(distinct: (0..<40).map { ("k\($0)", .integer(Int64($0))) })
        XCTAssertEqual(many["k37"], 37)
        XCTAssertNil(many["k40"])
    }
}
