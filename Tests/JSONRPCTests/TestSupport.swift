import Foundation
import JSON
import Synchronization
import XCTest

@testable import JSONRPC

/// A handler built from a closure; counts `connectionClosed` calls.
final class ClosureHandler: RPCHandler {
    let body: @Sendable (String, JSON?, RequestID?, Connection) -> Void
    let closedCount = Atomic<Int>(0)

    init(_ body: @escaping @Sendable (String, JSON?, RequestID?, Connection) -> Void) { self.body = body }

    func handle(method: String, params: JSON?, id: RequestID?, on connection: Connection) {
        body(method, params, id, connection)
    }

    func connectionClosed(_ connection: Connection) { closedCount.add(1, ordering: .relaxed) }
}

/// The JSON-RPC 2.0 spec §7 sample methods, answered inline.
let specMethods: @Sendable (String, JSON?, RequestID?, Connection) -> Void = { method, params, id, connection in
    guard let id else { return }
    switch method {
    case "subtract":
        let values: [Int64]
        if let array = params?.arrayValue {
            values = array.compactMap(\.int64Value)
        } else {
            values = [params?["minuend"]?.int64Value ?? 0, params?["subtrahend"]?.int64Value ?? 0]
        }
        connection.respond(to: id, result: .integer(values[0] - values[1]))
    case "sum": connection.respond(to: id, result: .integer(params?.arrayValue?.compactMap(\.int64Value).reduce(0, +) ?? 0))
    case "get_data": connection.respond(to: id, result: ["hello", 5])
    case "echo": connection.respond(to: id, result: params ?? .null)
    default: connection.respond(to: id, error: .methodNotFound(method, closest: nil))
    }
}

/// The test's end of a socketpair whose other end a transport serves on a background thread.
final class TestPeer: @unchecked Sendable {
    let fd: Int32
    private var buffer: [UInt8] = []
    let finished = DispatchSemaphore(value: 0)
    let transport: StdioTransport

    init(limits: ConnectionLimits = ConnectionLimits(), handler: RPCHandler) {
        var pair: [Int32] = [0, 0]
        precondition(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        fd = pair[0]
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        transport = StdioTransport(inputFD: pair[1], outputFD: pair[1], limits: limits)
        let transport = self.transport
        let finished = self.finished
        Thread.detachNewThread {
            transport.run { _ in handler }
            finished.signal()
        }
    }

    deinit { close(fd) }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Next `\n`-terminated line, without the newline; nil on EOF or after 5 s.
    func readLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeFirst(newline + 1)
                return line
            }
            guard fill() else { return nil }
        }
    }

    /// Next Content-Length framed body; nil on EOF or after 5 s.
    func readFramed() -> String? {
        while true {
            let text = String(decoding: buffer, as: UTF8.self)
            if let range = text.range(of: "\r\n\r\n") {
                let header = text[..<range.lowerBound]
                let length = Int(header.split(separator: " ").last!)!
                let start = text.utf8.distance(from: text.startIndex, to: range.upperBound)
                if buffer.count >= start + length {
                    let body = String(decoding: buffer[start..<start + length], as: UTF8.self)
                    buffer.removeFirst(start + length)
                    return body
                }
            }
            guard fill() else { return nil }
        }
    }

    /// Parses the next line as JSON.
    func readJSON() -> JSON? { readLine().flatMap { try? JSON.parse($0) } }

    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        buffer += chunk[..<count]
        return true
    }

    func closeWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// Waits for the transport's run() to return.
    func waitFinished(seconds: Double = 5) -> Bool { finished.wait(timeout: .now() + seconds) == .success }
}
