import XCTest

@testable import JSON

/// `JSONFastParser` declines what it does not read exactly as jansson does: on every text, either it declines or
/// its value is jansson's (random texts, and the edges of numbers, strings and names).
final class JSONFastParserTests: XCTestCase {
    private func outcomes(_ text: [UInt8], maxDepth: Int = JSON.defaultMaxDepth) -> (fast: JSON?, jansson: Result<JSON, JSONParseError>) {
        text.withUnsafeBytes { bytes in
            (
                JSONFastParser.parse(bytes, maxDepth: maxDepth),
                Result { () throws(JSONParseError) in try JSON.parseThroughJansson(bytes, maxDepth: maxDepth) }
            )
        }
    }

    private func assertAgrees(_ text: String, maxDepth: Int = JSON.defaultMaxDepth, accepted: Bool? = nil, line: UInt = #line) {
        let (fast, jansson) = outcomes(Array(text.utf8), maxDepth: maxDepth)
        if let fast {
            XCTAssertEqual(fast, try? jansson.get(), text, line: line)
            // Equality of objects ignores order: the texts must agree too.
            XCTAssertEqual(fast.serializedString(), (try? jansson.get())?.serializedString(), text, line: line)
        }
        if let accepted { XCTAssertEqual(fast != nil, accepted, text, line: line) }
    }

    func testTheEdgesAgreeWithJansson() {
        for (text, accepted) in [
            ("0", true), ("-0", true), ("-0.0", true), ("1.5e3", true), ("1E+2", true), ("1e-400", true), ("123456789012345678", true),
            ("1234567890123456789", false), ("1e400", false), ("01", false), ("1.", false), (".5", false), ("-", false), ("+1", false),
            (#""a\"b\\c\/d\b\f\n\r\t""#, true), (#""\u00e9\u20AC""#, true), (#""\u0000""#, false), (#""\ud83d\ude00""#, false),
            ("\"é\"", false), ("\"\u{1}\"", false), (#"{"a":1,"a":2}"#, false), (#"{"a":1,"b":[true,false,null,{}]}"#, true),
            ("[1,]", false), ("[,1]", false), (#"{"a":1,}"#, false), (" [ 1 , 2 ] ", true), ("[1] x", false), ("\u{FEFF}1", false),
            ("\"abc", false), ("tru", false), ("nulll", false), ("[]", true), ("{}", true), ("\t\n\r 7 \n", true),
        ] {
            assertAgrees(text, accepted: accepted)
        }
        assertAgrees("[[[1]]]", maxDepth: 3, accepted: true)
        assertAgrees("[[[[1]]]]", maxDepth: 3, accepted: false)
    }

    func testRandomTextsAgreeWithJansson() {
        var generator = SystemRandomNumberGenerator()
        let pieces = [
            "\"a\"", "\"\\u00e9\"", "\"é\"", "\"x\\\\y\"", "-0", "12", "1.25", "3e2", "true", "null", "[]", "{}", "1e400",
            "\"\\u0000\"", "01", "\"\\ud800\"",
        ]
        func text(_ depth: Int) -> String {
            switch Int.random(in: 0..<(depth > 3 ? 1 : 4), using: &generator) {
            case 1: return "[" + (0..<Int.random(in: 0..<4, using: &generator)).map { _ in text(depth + 1) }.joined(separator: ",") + "]"
            case 2:
                let names = ["\"k\"", "\"k\"", "\"l\"", "\"\\u006b\"", "\"m\""]
                return "{"
                    + (0..<Int.random(in: 0..<4, using: &generator)).map { _ in
                        names.randomElement(using: &generator)! + " : " + text(depth + 1)
                    }.joined(separator: ",") + "}"
            default: return pieces.randomElement(using: &generator)!
            }
        }
        var accepted = 0
        for _ in 0..<3000 {
            let sample = text(0)
            if JSONFastParser.parse(UnsafeRawBufferPointer(start: Array(sample.utf8), count: sample.utf8.count), maxDepth: 128) != nil {
                accepted += 1
            }
            assertAgrees(sample)
        }
        XCTAssertGreaterThan(accepted, 500, "the fast parser takes the common texts")
    }

    /// Strings of 0 to 40 bytes with an escape, a control character, a non-ASCII letter or DEL at each position, on
    /// both sides of the eight-byte words the string scan passes over, and strings the text ends inside of.
    func testStringsWithEachKindOfByteAtEveryPositionAgree() {
        for length in 0...40 {
            let plain = String(repeating: "a", count: length)
            assertAgrees("\"\(plain)\"", accepted: true)
            assertAgrees("\"\(plain)", accepted: false)
            assertAgrees("[\"\(plain)", accepted: false)
            for position in 0..<length {
                func with(_ piece: String) -> String {
                    var bytes = Array(plain.utf8)
                    bytes.replaceSubrange(position..<position + 1, with: Array(piece.utf8))
                    return "\"" + String(decoding: bytes, as: UTF8.self) + "\""
                }
                assertAgrees(with(#"\""#), accepted: true)
                assertAgrees(with(#"\\"#), accepted: true)
                assertAgrees(with(#"\u0041"#), accepted: true)
                assertAgrees(with("\u{7F}"), accepted: true)
                assertAgrees(with("\u{1}"), accepted: false)
                assertAgrees(with("\t"), accepted: false)
                assertAgrees(with("é"), accepted: false)
                assertAgrees(String(with("a").dropLast()), accepted: false)
            }
        }
    }

    /// Objects and arrays of 0 to 40 members, nested in one another: read as jansson reads them, and a name repeated
    /// at two positions declined, on both sides of the 16 members past which the repeat is looked for in a set.
    func testObjectsOfEverySizeAndRepeatedNamesAgree() throws {
        for count in 0...40 {
            let names = (0..<count).map { "\"k\($0)\"" }
            let members = names.enumerated().map { "\($1):[\($0),{\"k0\":\($0)},[]]" }
            let text = "{" + members.joined(separator: ",") + "}"
            assertAgrees(text, accepted: true)
            assertAgrees("[" + (0..<count).map { "\($0)" }.joined(separator: ",") + "]", accepted: true)
            let object = try XCTUnwrap(outcomes(Array(text.utf8)).fast?.objectValue)
            for index in 0..<count { XCTAssertEqual(object["k\(index)"]?.arrayValue?.first, .integer(Int64(index)), text) }
            // The first two, those around the 16th and the last two positions.
            let positions = Set([0, 1, 14, 15, 16, 17, count - 2, count - 1]).filter { (0..<count).contains($0) }.sorted()
            for first in positions {
                for second in positions where second > first {
                    var repeated = members
                    repeated[second] = names[first] + ":0"
                    assertAgrees("{" + repeated.joined(separator: ",") + "}", accepted: false)
                }
            }
        }
    }

    /// Names `String` calls equal whose characters differ are two members, in both parsers and at every object size
    /// (Protocol/README.md, "What counts as JSON"); the same characters twice are still a repeated name.
    func testCanonicallyEquivalentNamesAreTwoMembers() throws {
        let pairs = [
            ("\\u00e9", "e\\u0301"), ("K", "\\u212a"), (";", "\\u037e"), ("`", "\\u1fef"), ("\\u00c5", "\\u212b"),
            ("a\\u0316\\u0301", "a\\u0301\\u0316"),  // the same marks in another order: as many bytes either way
        ]
        for (first, second) in pairs {
            XCTAssertEqual(try JSON.parse(Array("\"\(first)\"".utf8)).stringValue, try JSON.parse(Array("\"\(second)\"".utf8)).stringValue)
            for others in [0, JSONObject.indexThreshold + 4] {
                for big in ["", "\"big\":123456789012345678901234567890,"] {  // a big integer: jansson reads the text
                    let filler = big + (0..<others).map { "\"m\($0)\":\($0)," }.joined()
                    let text = "{" + filler + "\"\(first)\":1,\"\(second)\":2}"
                    let object = try XCTUnwrap(JSON.parse(Array(text.utf8)).objectValue, text)
                    XCTAssertEqual(object.count, others + (big.isEmpty ? 2 : 3), text)
                    let names = try [first, second].map { try XCTUnwrap(JSON.parse(Array("\"\($0)\"".utf8)).stringValue) }
                    XCTAssertEqual(object[names[0]], 1, text)
                    XCTAssertEqual(object[names[1]], 2, text)
                    var copy = JSONObject()
                    for (name, value) in object { copy[name] = value }
                    XCTAssertEqual(copy, object, text)
                    XCTAssertThrowsError(try JSON.parse(Array(("{" + filler + "\"\(first)\":1,\"\(first)\":2}").utf8)), text)
                    assertAgrees(text, accepted: big.isEmpty)
                }
            }
        }
    }
}
