import Foundation
import JSON
import Synchronization
import XCTest

@testable import JSONRPC

final class ConnectionTests: XCTestCase {
    func testSpecExamplesOverSocketpair() {
        let peer = TestPeer(handler: ClosureHandler(specMethods))
        peer.send(#"{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}"# + "\n")
        XCTAssertEqual(peer.readLine(), #"{"jsonrpc":"2.0","id":1,"result":19}"#)
        peer.send(#"{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}"# + "\n")
        XCTAssertEqual(peer.readLine(), #"{"jsonrpc":"2.0","id":3,"result":19}"#)
        peer.send(
            #"{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}"# + "\n" + #"{"jsonrpc": "2.0", "method": "foobar"}"# + "\n")
        peer.send(#"{"jsonrpc": "2.0", "method": "foobar", "id": "1"}"# + "\n")
        XCTAssertEqual(peer.readJSON()?["error"]?["code"], -32601)
        peer.send(#"{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]"# + "\n")
        let parseError = peer.readJSON()
        XCTAssertEqual(parseError?["error"]?["code"], -32700)
        XCTAssertEqual(parseError?["id"], .null)
        peer.send(#"{"jsonrpc": "2.0", "method": 1, "params": "bar"}"# + "\n")
        XCTAssertEqual(peer.readJSON()?["error"]?["code"], -32600)
        peer.send(#"[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},{"jsonrpc": "2.0", "method"]"# + "\n")
        XCTAssertEqual(peer.readJSON()?["error"]?["code"], -32700)
        peer.send("[]\n")
        XCTAssertEqual(peer.readJSON()?["error"]?["code"], -32600)
        peer.send("[1]\n")
        XCTAssertEqual(peer.readJSON()?.arrayValue?.map { $0["error"]?["code"] }, [-32600])
        peer.send("[1,2,3]\n")
        XCTAssertEqual(peer.readJSON()?.arrayValue?.count, 3)
        peer.send(
            #"[{"jsonrpc":"2.0","method":"notify_sum","params":[1,2,4]},{"jsonrpc":"2.0","method":"notify_hello","params":[7]}]"# + "\n")
        peer.send(#"{"jsonrpc":"2.0","method":"echo","id":"after"}"# + "\n")
        // Nothing was written for the all-notification batch: the next line is the echo.
        XCTAssertEqual(peer.readLine(), #"{"jsonrpc":"2.0","id":"after","result":null}"#)
        peer.closeWrite()
        XCTAssertTrue(peer.waitFinished())
    }

    func testBatchAnsweredFromOtherThreadsComesBackAsOneArray() {
        let handler = ClosureHandler { method, params, id, connection in
            guard let id else { return }
            let delay = params?["ms"]?.intValue ?? 0
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(delay)) {
                connection.respond(to: id, result: .string(method))
            }
        }
        let peer = TestPeer(handler: handler)
        peer.send(
            #"[{"jsonrpc":"2.0","method":"a","params":{"ms":60},"id":1},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","method":"b","params":{"ms":1},"id":2},{"x":1}]"#
                + "\n")
        let batch = peer.readJSON()?.arrayValue ?? []
        XCTAssertEqual(Set(batch.map { $0["id"] ?? .null }), [1, 2, .null])
        XCTAssertEqual(batch.first { $0["id"] == 1 }?["result"], "a")
        peer.closeWrite()
        XCTAssertTrue(peer.waitFinished())
    }

    func testInFlightCapAnswersOverloaded() {
        var limits = ConnectionLimits()
        limits.maxInFlightRequests = 2
        limits.shutdownTimeout = .milliseconds(100)
        let peer = TestPeer(limits: limits, handler: ClosureHandler { _, _, _, _ in })
        for id in 1...3 { peer.send(#"{"jsonrpc":"2.0","method":"hold","id":\#(id)}"# + "\n") }
        let refused = peer.readJSON()
        XCTAssertEqual(refused?["id"], 3)
        XCTAssertEqual(refused?["error"]?["code"], -32004)
        XCTAssertEqual(refused?["error"]?["data"]?["limit"], 2)
        peer.closeWrite()
        // The two held requests are answered -32003 when the drain time is up.
        let leftovers = [peer.readJSON(), peer.readJSON()]
        XCTAssertEqual(Set(leftovers.map { $0?["id"] ?? .null }), [1, 2])
        XCTAssertEqual(leftovers.map { $0?["error"]?["code"] }, [-32003, -32003])
        XCTAssertTrue(peer.waitFinished())
    }

    func testDaemonToHostRequestsMatchAndTimeOut() {
        let handler = ClosureHandler { method, params, id, connection in
            guard let id else { return }
            let timeout = Duration.milliseconds(params?["timeoutMs"]?.intValue ?? 2000)
            connection.request(method: "host/\(method)", params: ["q": 1], timeout: timeout) { result in
                switch result {
                case .success(let value): connection.respond(to: id, result: ["host": value])
                case .failure(let failure): connection.respond(to: id, error: failure.errorObject)
                }
            }
        }
        let peer = TestPeer(handler: handler)
        peer.send(#"{"jsonrpc":"2.0","method":"ask","id":"r1"}"# + "\n")
        let request = peer.readJSON()
        XCTAssertEqual(request?["method"], "host/ask")
        XCTAssertEqual(request?["params"], ["q": 1])
        let hostID = request?["id"]?.stringValue ?? ""
        XCTAssertTrue(hostID.hasPrefix("pb-"))
        peer.send(#"{"jsonrpc":"2.0","id":"\#(hostID)","result":{"accessStatus":"granted"}}"# + "\n")
        XCTAssertEqual(peer.readLine(), #"{"jsonrpc":"2.0","id":"r1","result":{"host":{"accessStatus":"granted"}}}"#)

        peer.send(#"{"jsonrpc":"2.0","method":"silent","params":{"timeoutMs":150},"id":"r2"}"# + "\n")
        XCTAssertEqual(peer.readJSON()?["method"], "host/silent")
        let timedOut = peer.readJSON()
        XCTAssertEqual(timedOut?["id"], "r2")
        XCTAssertEqual(timedOut?["error"]?["code"], -32001)
        peer.closeWrite()
        XCTAssertTrue(peer.waitFinished())
    }

    func testEndOfInputTellsHandlerOnceAndFinishesWork() {
        var limits = ConnectionLimits()
        limits.shutdownTimeout = .seconds(3)
        let handler = ClosureHandler { _, _, id, connection in
            guard let id else { return }
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(200)) { connection.respond(to: id, result: "done") }
        }
        let peer = TestPeer(limits: limits, handler: handler)
        peer.send(#"{"jsonrpc":"2.0","method":"slow","id":7}"# + "\n")
        peer.closeWrite()
        XCTAssertEqual(peer.readLine(), #"{"jsonrpc":"2.0","id":7,"result":"done"}"#)
        XCTAssertTrue(peer.waitFinished())
        XCTAssertEqual(handler.closedCount.load(ordering: .relaxed), 1)
    }

    func testContentLengthPeerIsAnsweredInKind() {
        let peer = TestPeer(handler: ClosureHandler(specMethods))
        let body = #"{"jsonrpc":"2.0","method":"echo","params":["é"],"id":1}"#
        peer.send("Content-Length: \(body.utf8.count)\r\nContent-Type: application/vscode-jsonrpc; charset=utf8\r\n\r\n\(body)")
        XCTAssertEqual(peer.readFramed(), #"{"jsonrpc":"2.0","id":1,"result":["é"]}"#)
        peer.closeWrite()
        XCTAssertTrue(peer.waitFinished())
    }

    /// Protocol/README.md "What counts as JSON": each body is one Content-Length frame, answered with `id` null,
    /// and the echo sent after it is answered next (a refused batch is refused whole: its own echo is never run).
    func testRefusedMemberNamesAre32600AndRawNULIsAParseError() {
        let refused = "(valid JSON that this parser refuses)"
        let rows: [(body: String, code: Int64, reason: String?)] = [
            ("123\u{0}", -32700, "raw NUL byte (0x00), which is never valid in JSON text"),
            (#"{"a":"b","a":"c"}"#, -32600, #"duplicate member name "a" "# + refused),
            (#"{"a":"b","a":"b"}"#, -32600, #"duplicate member name "a" "# + refused),
            (#"{"foo\u0000bar": 42}"#, -32600, #"member name "foo\u0000bar" holds U+0000 "# + refused),
            (#"{"a":1,"a":2, garbage"#, -32700, nil),
            (
                #"[{"jsonrpc":"2.0","method":"echo","id":"lost"},{"jsonrpc":"2.0","method":"echo","id":1,"id":2}]"#, -32600,
                #"duplicate member name "id" "# + refused
            ),
        ]
        let peer = TestPeer(handler: ClosureHandler(specMethods))
        func framed(_ body: String) -> String { "Content-Length: \(body.utf8.count)\r\n\r\n\(body)" }
        for (number, row) in rows.enumerated() {
            peer.send(framed(row.body) + framed(#"{"jsonrpc":"2.0","method":"echo","id":\#(number)}"#))
            let answer = peer.readFramed().flatMap { try? JSON.parse($0) }
            XCTAssertEqual(answer?["id"], .null, row.body)
            XCTAssertEqual(answer?["error"]?["code"], .integer(row.code), row.body)
            if let reason = row.reason { XCTAssertEqual(answer?["error"]?["data"]?["reason"], .string(reason), row.body) }
            XCTAssertEqual(peer.readFramed(), #"{"jsonrpc":"2.0","id":\#(number),"result":null}"#, row.body)
        }
        peer.closeWrite()
        XCTAssertTrue(peer.waitFinished())
    }

    func testNotificationsAndResponsesKeepCallOrder() {
        let handler = ClosureHandler { _, _, id, connection in
            connection.notify(method: "first", params: [:])
            if let id { connection.respond(to: id, result: 1) }
            connection.notify(method: "second", params: [:])
        }
        let peer = TestPeer(handler: handler)
        peer.send(#"{"jsonrpc":"2.0","method":"go","id":1}"# + "\n")
        XCTAssertEqual(peer.readJSON()?["method"], "first")
        XCTAssertEqual(peer.readJSON()?["id"], 1)
        XCTAssertEqual(peer.readJSON()?["method"], "second")
        peer.closeWrite()
        XCTAssertTrue(peer.waitFinished())
    }

    func testShutdownAnswersWhatIsLeftWithShuttingDown() {
        var limits = ConnectionLimits()
        limits.shutdownTimeout = .milliseconds(200)
        let peer = TestPeer(limits: limits, handler: ClosureHandler { _, _, _, _ in })
        peer.send(#"{"jsonrpc":"2.0","method":"never","id":"x"}"# + "\n")
        Thread.sleep(forTimeInterval: 0.05)
        peer.transport.shutdown()
        let answer = peer.readJSON()
        XCTAssertEqual(answer?["id"], "x")
        XCTAssertEqual(answer?["error"]?["code"], -32003)
        XCTAssertTrue(peer.waitFinished())
    }

    /// The loop waits without a timeout while no connection has a deadline; output a socket peer does not read gives
    /// its connection one (the stall timeout), so that the peer is still dropped though nothing else happens.
    func testASocketPeerThatReadsNothingIsDroppedAfterTheStallTimeoutOfAnIdleLoop() {
        var pair: [Int32] = [0, 0]
        precondition(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[0]) }
        setNonBlocking(pair[1])
        var limits = ConnectionLimits()
        limits.stallTimeout = .milliseconds(200)
        // An answer larger than both socket buffers: the rest waits for the peer.
        let handler = ClosureHandler { _, _, id, connection in
            if let id { connection.respond(to: id, result: .string(String(repeating: "x", count: 4 << 20))) }
        }
        let loop = EventLoop()
        loop.stopWhenEmpty = true
        loop.add(readFD: pair[1], writeFD: pair[1], isSocket: true, peer: nil, limits: limits, factory: { _ in handler })
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            loop.run()
            finished.signal()
        }
        let request = Array(#"{"jsonrpc":"2.0","method":"flood","id":1}"#.utf8) + [0x0A]
        _ = request.withUnsafeBytes { send(pair[0], $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        XCTAssertEqual(finished.wait(timeout: .now() + 5), .success, "the peer was not dropped")
    }
}
