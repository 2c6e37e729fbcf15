import JSON
import XCTest

@testable import JSONRPC

final class FramerTests: XCTestCase {
    /// Feeds `chunks` and returns what came out: message texts, or "<too large>" / "<unreadable: …>".
    private func run(_ framer: inout Framer, _ chunks: [[UInt8]]) -> [String] {
        var events: [String] = []
        for chunk in chunks {
            _ = chunk.withUnsafeBytes { buffer in
                framer.feed(buffer) { event in
                    switch event {
                    case .message(let body): events.append(String(decoding: body, as: UTF8.self))
                    case .tooLarge(let declared): events.append("<too large\(declared.map { " \($0)" } ?? "")>")
                    case .unreadable(let reason): events.append("<unreadable: \(reason)>")
                    case .cutShort(let reason): events.append("<cut short: \(reason)>")
                    }
                }
            }
        }
        return events
    }

    private let first = #"{"jsonrpc":"2.0","method":"echo","params":["é😀✓"],"id":1}"#
    private let second = #"{"jsonrpc":"2.0","method":"ping","id":"é"}"#

    func testNDJSONSplitAtEveryByteIncludingInsideMultibyteCharacters() {
        let stream = Array((first + "\n" + second + "\r\n").utf8)
        for split in 0...stream.count {
            var framer = Framer(maxMessageBytes: 1024)
            let events = run(&framer, [Array(stream[..<split]), Array(stream[split...])])
            XCTAssertEqual(events, [first, second], "split at \(split)")
            XCTAssertEqual(framer.framing, .ndjson)
        }
    }

    func testNDJSONOneByteAtATime() {
        let stream = Array((first + "\n" + second + "\n").utf8)
        var framer = Framer(maxMessageBytes: 1024)
        XCTAssertEqual(run(&framer, stream.map { [$0] }), [first, second])
    }

    func testContentLengthSplitAtEveryByteIncludingInsideMultibyteCharacters() {
        let bodies = [first, second]
        var stream: [UInt8] = []
        for body in bodies {
            stream += Array("Content-Length: \(body.utf8.count)\r\nContent-Type: application/vscode-jsonrpc; charset=utf8\r\n\r\n".utf8)
            stream += Array(body.utf8)
        }
        for split in 0...stream.count {
            for second in split...min(stream.count, split + 7) {
                var framer = Framer(maxMessageBytes: 1024)
                let events = run(&framer, [Array(stream[..<split]), Array(stream[split..<second]), Array(stream[second...])])
                XCTAssertEqual(events, bodies, "split at \(split), \(second)")
                XCTAssertEqual(framer.framing, .contentLength)
            }
        }
    }

    func testContentLengthHeadersAnyCaseAndOrder() {
        let body = #"{"jsonrpc":"2.0","method":"x"}"#
        let text = "content-type: application/json\r\ncontent-length:\(body.utf8.count)\r\n\r\n" + body
        var framer = Framer(maxMessageBytes: 1024)
        XCTAssertEqual(run(&framer, [Array(text.utf8)]), [body])
    }

    func testLeadingWhitespaceAndBlankLinesAreSkipped() {
        var framer = Framer(maxMessageBytes: 1024)
        XCTAssertEqual(run(&framer, [Array("\n \r\n\(first)\n\n\n".utf8)]), [first])
        XCTAssertEqual(framer.framing, .ndjson)
    }

    func testOverLimitNDJSONLineIsRefusedAndTheNextLineStillRead() {
        let big = "[" + String(repeating: "1,", count: 100) + "1]"
        for chunkSize in [1, 7, 64, 4096] {
            var framer = Framer(maxMessageBytes: 64)
            let stream = Array((big + "\n" + second + "\n").utf8)
            let chunks = stride(from: 0, to: stream.count, by: chunkSize).map { Array(stream[$0..<min(stream.count, $0 + chunkSize)]) }
            XCTAssertEqual(run(&framer, chunks), ["<too large>", second], "chunk size \(chunkSize)")
            XCTAssertLessThanOrEqual(framer.bufferedBytes, 65)
        }
    }

    func testOverLimitContentLengthBodyIsSkippedWithoutBuffering() {
        var framer = Framer(maxMessageBytes: 64)
        let header = Array("Content-Length: 100000\r\n\r\n".utf8)
        var events = run(&framer, [header])
        XCTAssertEqual(events, ["<too large 100000>"])
        for _ in 0..<100 { events += run(&framer, [[UInt8](repeating: 0x41, count: 1000)]) }
        XCTAssertEqual(framer.bufferedBytes, 0)
        events += run(&framer, [Array("Content-Length: \(second.utf8.count)\r\n\r\n\(second)".utf8)])
        XCTAssertEqual(events, ["<too large 100000>", second])
    }

    func testAHugeDeclaredLengthCostsOnlyThatMessage() {
        var framer = Framer(maxMessageBytes: 64)
        let next = "Content-Length: \(second.utf8.count)\r\n\r\n\(second)"
        let events = run(&framer, [Array("Content-Length: 9000000000000000000\r\n\r\n{\"x\":1}\(next)\(next)".utf8)])
        XCTAssertEqual(events, ["<too large 9000000000000000000>", second, second])
    }

    func testUnreadableHeaderIsReportedOnceAndTheNextMessageIsRead() {
        let next = "Content-Length: \(second.utf8.count)\r\n\r\n\(second)"
        var framer = Framer(maxMessageBytes: 64)
        XCTAssertEqual(
            run(&framer, [Array("Content-Type: x\r\n\r\n{}\(next)".utf8)]), ["<unreadable: header block without Content-Length>", second])
        var other = Framer(maxMessageBytes: 64)
        XCTAssertEqual(
            run(&other, [Array("Content-Length: -5\r\n\r\n{\"a\":1}garbage\r\n\(next)".utf8)]),
            ["<unreadable: invalid Content-Length>", second])
        var endless = Framer(maxMessageBytes: 64)
        let events = run(&endless, [Array("Content-Length: 5\r\nX-Junk: ".utf8), [UInt8](repeating: 0x41, count: 9000), Array(next.utf8)])
        XCTAssertEqual(events, ["<unreadable: header block over 8192 bytes>", second])
        var junk = Framer(maxMessageBytes: 64)
        XCTAssertEqual(
            run(&junk, [Array("Content-Length: 2\r\n\r\n{}not a header\r\n\r\n".utf8), Array("content-LENGTH: 2\r\n\r\n[]".utf8)]),
            ["{}", "<unreadable: malformed header line>", "[]"])
    }

    func testShortContentLengthCostsOnlyThatMessage() {
        // A length one byte short: the body lacks its last byte, which then precedes the next header.
        let stream = "Content-Length: \(first.utf8.count - 1)\r\n\r\n\(first)Content-Length: \(second.utf8.count)\r\n\r\n\(second)"
        for split in 0...stream.utf8.count {
            var framer = Framer(maxMessageBytes: 1024)
            let bytes = Array(stream.utf8)
            let events = run(&framer, [Array(bytes[..<split]), Array(bytes[split...])])
            XCTAssertEqual(events, [String(first.dropLast()), second], "split at \(split)")
        }
    }

    func testFeedPausesAndResumesWhereItStopped() {
        let stream = Array((first + "\n" + second + "\n" + first + "\n").utf8)
        var framer = Framer(maxMessageBytes: 1024)
        var messages: [String] = []
        let consumed = stream.withUnsafeBytes { buffer in
            framer.feed(buffer, pausing: { messages.count == 1 }) { event in
                if case .message(let body) = event { messages.append(String(decoding: body, as: UTF8.self)) }
            }
        }
        XCTAssertEqual(messages, [first])
        XCTAssertEqual(consumed, first.utf8.count + 1)
        Array(stream[consumed...]).withUnsafeBytes { buffer in
            _ = framer.feed(buffer) { event in
                if case .message(let body) = event { messages.append(String(decoding: body, as: UTF8.self)) }
            }
        }
        XCTAssertEqual(messages, [first, second, first])
    }

    func testUnterminatedLastLineIsAMessageAtEndOfInput() {
        var framer = Framer(maxMessageBytes: 1024)
        XCTAssertEqual(run(&framer, [Array((first + "\n" + second).utf8)]), [first])
        var events: [String] = []
        framer.finish { event in
            if case .message(let body) = event { events.append(String(decoding: body, as: UTF8.self)) }
        }
        XCTAssertEqual(events, [second])

    }

    /// A Content-Length message cut short by the end of input is reported once; whitespace after a whole message
    /// is not a message.
    func testAContentLengthMessageCutShortIsReportedAtEndOfInput() {
        let whole = "Content-Length: 2\r\n\r\n{}"
        for (input, expected) in [
            (whole + "Content-Length: 40\r\n\r\n{\"jsonrpc\"", ["<cut short: input ended after 10 of the body's 40 bytes>"]),
            (whole + "Content-Length: 40\r\n", ["<cut short: input ended inside a header block>"]),
            (whole + "Content-Len", ["<cut short: input ended inside a header block>"]),
            (whole + "\r\n", []), (whole, []),
        ] {
            var framer = Framer(maxMessageBytes: 1024)
            XCTAssertEqual(run(&framer, [Array(input.utf8)]), ["{}"])
            var events: [String] = []
            framer.finish { event in
                if case .cutShort(let reason) = event { events.append("<cut short: \(reason)>") } else { events.append("\(event)") }
            }
            XCTAssertEqual(events, expected, input)
        }
    }

    /// A Content-Length is digits only, and a second one must agree with the first.
    func testAContentLengthWithASignOrTwoThatDifferIsUnreadable() {
        let body = "{}"
        for (headers, expected) in [
            ("Content-Length: +2\r\n", ["<unreadable: invalid Content-Length>"]),
            ("Content-Length: 2\r\nContent-Length: 3\r\n", ["<unreadable: two Content-Length headers that differ>"]),
            ("Content-Length: 2\r\ncontent-length: 2\r\n", [body]),
        ] {
            var framer = Framer(maxMessageBytes: 1024)
            XCTAssertEqual(run(&framer, [Array((headers + "\r\n" + body).utf8)]), expected, headers)
        }
    }

    func testOutputFraming() {
        XCTAssertEqual(String(decoding: Framing.ndjson.frame(Array("{}".utf8)), as: UTF8.self), "{}\n")
        XCTAssertEqual(
            String(decoding: Framing.contentLength.frame(Array(#"["é"]"#.utf8)), as: UTF8.self), "Content-Length: 6\r\n\r\n[\"é\"]")
    }
}
