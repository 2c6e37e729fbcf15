import JSON
import XCTest

@testable import JSONRPC

/// Back-pressure, framing recovery and ordering on an ``EmbeddedConnection``: every step is a call, no threads.
final class BackPressureTests: XCTestCase {
    private func limits(highWater: Int) -> ConnectionLimits {
        var limits = ConnectionLimits()
        limits.outboundHighWater = highWater
        return limits
    }

    private func lines(_ bytes: [UInt8]) -> [JSON] {
        bytes.split(separator: UInt8(ascii: "\n")).compactMap { try? JSON.parse(Array($0)) }
    }

    private func request(_ id: Int, _ text: String) -> String {
        #"{"jsonrpc":"2.0","method":"echo","params":[""# + text + #""],"id":"# + "\(id)}\n"
    }

    func testDispatchStopsInsideOneReadAtTheHighWaterMarkAndResumesWhereItStopped() {
        let handled = HandledCount()
        let channel = EmbeddedConnection(
            limits: limits(highWater: 20_000),
            handler: ClosureHandler { method, params, id, connection in
                handled.add()
                specMethods(method, params, id, connection)
            })
        let big = String(repeating: "x", count: 3000)
        channel.writeInbound((0..<40).map { request($0, big) }.joined())
        // One read held 40 requests; only those whose answers fit under the mark (plus one) were handled.
        let first = handled.value
        XCTAssertLessThan(first, 40)
        XCTAssertLessThan(channel.queuedBytes, 20_000 + 3100)
        XCTAssertGreaterThan(channel.heldBytes, 0)
        // Each time the peer reads, the connection goes on; every answer comes, in order.
        var output: [UInt8] = []
        for _ in 0..<200 where output.lazy.filter({ $0 == UInt8(ascii: "\n") }).count < 40 {
            output += channel.readOutbound()
        }
        let answers = lines(output)
        XCTAssertEqual(answers.map { $0["id"] }, (0..<40).map { JSON.integer(Int64($0)) })
        XCTAssertEqual(handled.value, 40)
        XCTAssertEqual(channel.heldBytes, 0)
    }

    func testABatchWhoseAnswersPassTheMarkIsRefusedPastIt() {
        let channel = EmbeddedConnection(limits: limits(highWater: 10_000), handler: ClosureHandler(specMethods))
        let big = String(repeating: "y", count: 3000)
        let calls = (0..<10).map { #"{"jsonrpc":"2.0","method":"echo","params":[""# + big + #""],"id":"# + "\($0)}" }
        channel.writeInbound("[" + calls.joined(separator: ",") + "]\n")
        var output: [UInt8] = []
        for _ in 0..<20 { output += channel.readOutbound() }
        let batch = try? XCTUnwrap(lines(output).first?.arrayValue)
        XCTAssertEqual(batch?.count, 10)
        let answered = batch?.filter { $0["result"] != nil }.count ?? 0
        XCTAssertEqual(answered, 4, "answers accepted until they pass 10,000 bytes")
        XCTAssertEqual(batch?.last?["error"]?["code"], -32004)
    }

    func testAShortContentLengthCostsOneErrorAndTheSessionGoesOn() {
        let channel = EmbeddedConnection(limits: limits(highWater: 1 << 20), handler: ClosureHandler(specMethods))
        let counted = #"{"jsonrpc":"2.0","method":"echo","params":["é"],"id":1}"#
        let next = #"{"jsonrpc":"2.0","method":"sum","params":[1,2],"id":2}"#
        channel.writeInbound("Content-Length: \(counted.count)\r\n\r\n\(counted)Content-Length: \(next.utf8.count)\r\n\r\n\(next)")
        let output = String(decoding: channel.readOutbound(), as: UTF8.self)
        let bodies = output.components(separatedBy: "Content-Length: ").dropFirst().map { $0.components(separatedBy: "\r\n\r\n")[1] }
        XCTAssertEqual(bodies.count, 2)
        XCTAssertEqual(try JSON.parse(Array(bodies[0].utf8))["error"]?["code"], -32700)
        XCTAssertEqual(bodies[1], #"{"jsonrpc":"2.0","id":2,"result":3}"#)
    }
}

/// A counter a handler bumps (handlers are called on the test's thread here).
final class HandledCount: @unchecked Sendable {
    private(set) var value = 0
    func add() { value += 1 }
}
