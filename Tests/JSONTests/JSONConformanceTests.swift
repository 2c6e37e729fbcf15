import JSON
import XCTest

/// What ``JSON/parse(_:maxDepth:)`` makes of texts that RFC 8259 accepts, rejects, or leaves to the
/// implementation: one table, each row a text, the RFC's verdict and this parser's outcome (Protocol/README.md
/// "Errors" gives the answers the daemon builds from them).
final class JSONConformanceTests: XCTestCase {
    /// What RFC 8259 says of a text.
    enum Verdict {
        case valid
        case invalid
        /// Valid grammar whose handling the RFC leaves open (number range, lone surrogates, depth, a byte order mark).
        case implementationDefined
    }

    /// What the parser does with it.
    enum Outcome {
        case value(JSON)
        /// ``JSONParseError/Kind/invalidText``, at `offset` when given.
        case invalid(offset: Int? = nil)
        /// ``JSONParseError/Kind/refusedMemberName`` with exactly this message.
        case refused(String)
    }

    struct Row {
        let name: String
        let text: [UInt8]
        let verdict: Verdict
        let outcome: Outcome
    }

    private static func row(_ name: String, _ text: String, _ verdict: Verdict, _ outcome: Outcome) -> Row {
        Row(name: name, text: Array(text.utf8), verdict: verdict, outcome: outcome)
    }

    private static func row(_ name: String, bytes: [UInt8], _ verdict: Verdict, _ outcome: Outcome) -> Row {
        Row(name: name, text: bytes, verdict: verdict, outcome: outcome)
    }

    private static func duplicate(_ literal: String) -> Outcome {
        .refused("duplicate member name \(literal) (valid JSON that this parser refuses)")
    }

    private static func nulInName(_ literal: String) -> Outcome {
        .refused("member name \(literal) holds U+0000 (valid JSON that this parser refuses)")
    }

    private static func nested(_ depth: Int, open: String = "[", close: String = "]") -> String {
        String(repeating: open, count: depth) + String(repeating: close, count: depth)
    }

    private static let quote = UInt8(ascii: "\"")
    private static let longName = String(repeating: "n", count: 70)

    static let table: [Row] = [
        // Top-level values and whitespace.
        row("integer", "123", .valid, .value(123)),
        row("string", #""x""#, .valid, .value("x")),
        row("true", "true", .valid, .value(true)),
        row("null", "null", .valid, .value(nil)),
        row("whitespace around", " \t\r\n[1]\n ", .valid, .value([1])),
        row("empty text", "", .invalid, .invalid(offset: 0)),
        row("whitespace only", " \t\r\n", .invalid, .invalid()),
        row("trailing garbage", #"{"a":1} x"#, .invalid, .invalid(offset: 9)),
        row("two values", "[1] [2]", .invalid, .invalid()),
        row("trailing comma", "[1,]", .invalid, .invalid()),
        row("single quotes", "{'a':1}", .invalid, .invalid()),
        row("comment", "/* c */ 1", .invalid, .invalid()),
        row("missing colon", #"{"a" 1}"#, .invalid, .invalid()),

        // Raw NUL bytes: never JSON, whitespace or not, inside a string or not.
        row("123 then NUL", bytes: Array("123".utf8) + [0], .invalid, .invalid(offset: 3)),
        row("NUL alone", bytes: [0], .invalid, .invalid(offset: 0)),
        row("NUL in a string", bytes: [quote, 0x61, 0, 0x62, quote], .invalid, .invalid(offset: 2)),
        row("NUL as whitespace", bytes: Array("[1,".utf8) + [0] + Array("2]".utf8), .invalid, .invalid(offset: 3)),

        // Member names: repeated or holding U+0000 is valid JSON that this parser refuses, but only when the rest
        // of the text is valid too.
        row("duplicate, other value", #"{"a":"b","a":"c"}"#, .valid, duplicate(#""a""#)),
        row("duplicate, same value", #"{"a":"b","a":"b"}"#, .valid, duplicate(#""a""#)),
        row("duplicate spelled as an escape", #"{"a":1,"\u0061":2}"#, .valid, duplicate(#""a""#)),
        row("duplicate with a multibyte name", #"{"é":1,"x":[],"é":2}"#, .valid, duplicate(#""é""#)),
        row("duplicate in a nested object", #"{"a":{"b":1,"b":2}}"#, .valid, duplicate(#""b""#)),
        row("duplicate in a batch", #"[{"jsonrpc":"2.0","method":"x","id":1,"id":2}]"#, .valid, duplicate(#""id""#)),
        row("duplicate before a big integer", #"{"x":1,"x":18446744073709551616}"#, .valid, duplicate(#""x""#)),
        row("big integer before a duplicate", #"{"n":18446744073709551616,"x":1,"x":2}"#, .valid, duplicate(#""x""#)),
        row("big integer as a member name", #"{"id":1,99999999999999999999999:1}"#, .invalid, .invalid()),
        row("big integer as a member name, then a duplicate", #"{99999999999999999999999:1,"a":1,"a":2}"#, .invalid, .invalid()),
        row(
            "big integer value, then a colon in a string", #"{"a":99999999999999999999999,"b":":"}"#, .implementationDefined,
            .value(["a": .bigInteger("99999999999999999999999"), "b": ":"])),
        row("NUL escaped in a name", #"{"foo\u0000bar": 42}"#, .valid, nulInName(#""foo\u0000bar""#)),
        row("NUL-escaped names repeated", #"{"\u0000":1,"\u0000":2}"#, .valid, nulInName(#""\u0000""#)),
        row("long duplicate name shortened", "{\"\(longName)\":1,\"\(longName)\":2}", .valid, duplicate("\"\(longName.prefix(64))…\"")),
        row("duplicate then garbage", #"{"a":1,"a":2, garbage"#, .invalid, .invalid(offset: 21)),
        row("duplicate then trailing bytes", #"{"a":1,"a":2} x"#, .invalid, .invalid(offset: 15)),
        row("duplicate then unclosed", #"{"a":1,"a":2"#, .invalid, .invalid()),
        row("NUL name then garbage", #"{"a\u0000":1, ]"#, .invalid, .invalid()),
        row("duplicate then lone surrogate", #"{"a":1,"a":"\ud800"}"#, .implementationDefined, .invalid()),
        row("NUL escaped in a value", #"{"a":"x\u0000y"}"#, .valid, .value(["a": "x\u{0}y"])),

        // Numbers.
        row("minus zero", "-0", .valid, .value(.integer(0))),
        row("minus zero point zero", "-0.0", .valid, .value(.double(-0.0))),
        row("exponent", "1E+2", .valid, .value(.double(100))),
        row("Int64 max", "9223372036854775807", .valid, .value(.integer(.max))),
        row("beyond Int64", "18446744073709551616", .implementationDefined, .value(.bigInteger("18446744073709551616"))),
        row("beyond Int64, negative", "-99999999999999999999", .implementationDefined, .value(.bigInteger("-99999999999999999999"))),
        row(
            "beyond Int64 in an array", "[1,18446744073709551616]", .implementationDefined,
            .value([1, .bigInteger("18446744073709551616")])),
        row("huge exponent", "1e400", .implementationDefined, .invalid()),
        row("huge negative exponent", "1e-400", .implementationDefined, .value(.double(0))),
        row("long fraction", "123456789012345678901234567890.5", .implementationDefined, .value(.double(1.2345678901234568e29))),
        row("leading zero", "[01]", .invalid, .invalid()),
        row("bare point", "[1.]", .invalid, .invalid()),
        row("leading point", "[.5]", .invalid, .invalid()),
        row("plus sign", "[+1]", .invalid, .invalid()),
        row("NaN", "[NaN]", .invalid, .invalid()),
        row("Infinity", "[Infinity]", .invalid, .invalid()),

        // Nesting: 128 levels is the limit.
        row("arrays at the limit", nested(128), .implementationDefined, .value((1..<128).reduce(JSON.array([])) { inner, _ in [inner] })),
        row("arrays beyond the limit", nested(129), .implementationDefined, .invalid(offset: 128)),
        row(
            "objects beyond the limit", String(repeating: #"{"a":"#, count: 129) + "1" + String(repeating: "}", count: 129),
            .implementationDefined, .invalid(offset: 5 * 128)),
        row(
            "brackets inside strings do not count", "[\"\(String(repeating: "[", count: 200))\"]", .valid,
            .value([.string(String(repeating: "[", count: 200))])),

        // Escapes and surrogates.
        row("surrogate pair", #""\ud83d\ude00""#, .valid, .value("😀")),
        row("lone high surrogate", #""\ud800""#, .implementationDefined, .invalid()),
        row("lone low surrogate", #""\udc00""#, .implementationDefined, .invalid()),
        row("high surrogate then a letter", #""\ud800\u0041""#, .implementationDefined, .invalid()),
        row("short escape", #""\u00""#, .invalid, .invalid()),
        row("unknown escape", #""\x""#, .invalid, .invalid()),
        row("raw control character", bytes: [quote, 0x01, quote], .invalid, .invalid()),

        // UTF-8.
        row("overlong slash, 2 bytes", bytes: [quote, 0xC0, 0xAF, quote], .invalid, .invalid(offset: 1)),
        row("overlong slash, 3 bytes", bytes: [quote, 0xE0, 0x80, 0xAF, quote], .invalid, .invalid(offset: 1)),
        row("byte FF", bytes: [quote, 0xFF, quote], .invalid, .invalid(offset: 1)),
        row("truncated sequence", bytes: [quote, 0xC3, 0x28, quote], .invalid, .invalid()),
        row("encoded surrogate", bytes: [quote, 0xED, 0xA0, 0x80, quote], .invalid, .invalid()),
        row("byte order mark", bytes: [0xEF, 0xBB, 0xBF] + Array("{}".utf8), .implementationDefined, .invalid(offset: 0)),
        row("multibyte text", "[\"héllo ✓ 😀\"]", .valid, .value(["héllo ✓ 😀"])),
    ]

    func testEachTextOfTheTableHasItsExpectedOutcome() {
        for row in Self.table {
            let result = Result { () throws(JSONParseError) in try JSON.parse(row.text) }
            let context = "\(row.name) (\(row.verdict)): \(result)"
            switch (row.outcome, result) {
            case (.value(let expected), .success(let value)):
                XCTAssertEqual(value, expected, context)
            case (.invalid(let offset), .failure(let error)):
                XCTAssertEqual(error.kind, .invalidText, context)
                if let offset { XCTAssertEqual(error.offset, offset, context) }
            case (.refused(let message), .failure(let error)):
                XCTAssertEqual(error.kind, .refusedMemberName, context)
                XCTAssertEqual(error.message, message, context)
            default:
                XCTFail("expected \(row.outcome), got \(context)")
            }
        }
    }

    /// Every row the RFC calls invalid is refused as not JSON, never as a refused member name.
    func testTextsTheRFCRejectsAreNeverTakenAsValid() {
        for row in Self.table where row.verdict == .invalid {
            guard case .invalid = row.outcome else { return XCTFail("\(row.name) is invalid JSON but expects \(row.outcome)") }
        }
    }

    func testAnEmptyTextSaysSo() {
        XCTAssertThrowsError(try JSON.parse([UInt8]())) { error in
            XCTAssertEqual((error as? JSONParseError)?.message, "empty text, where a JSON value was expected")
        }
    }

    func testARawNULIsRefusedWithItsPosition() {
        let text = Array("{\n  \"a\": 1".utf8) + [0] + Array("}".utf8)
        XCTAssertThrowsError(try JSON.parse(text)) { error in
            let error = error as? JSONParseError
            XCTAssertEqual(error?.message, "raw NUL byte (0x00), which is never valid in JSON text")
            XCTAssertEqual(error?.offset, 10)
            XCTAssertEqual(error?.line, 2)
            XCTAssertEqual(error?.column, 9)
        }
    }
}
