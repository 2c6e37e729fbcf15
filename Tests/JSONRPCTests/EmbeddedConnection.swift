import Glibc
import JSON

@testable import JSONRPC

/// A ``Connection`` stepped by hand, the role NIO's `EmbeddedChannel` plays: its event loop never runs, and
/// each call does one thing on the calling thread — read what the peer wrote, flush, resume held input — so
/// framing, back-pressure and ordering are tested without threads or sleeps.
///
/// The connection serves one end of a socketpair whose send buffer is small; the test is the other end and
/// never blocks on it.
final class EmbeddedConnection {
    let loop = EventLoop()
    let connection: Connection
    private let peerFD: Int32
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 16)

    init(limits: ConnectionLimits, handler: RPCHandler) {
        var pair: [Int32] = [0, 0]
        precondition(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &pair) == 0)
        var small: Int32 = 4096
        setsockopt(pair[1], SOL_SOCKET, SO_SNDBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(pair[0], SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        peerFD = pair[0]
        connection = loop.add(readFD: pair[1], writeFD: pair[1], isSocket: true, peer: nil, limits: limits) { _ in handler }
    }

    deinit {
        connection.finish()
        close(connection.readFD)
        close(peerFD)
        buffer.deallocate()
    }

    /// The peer writes `text`; the connection reads once (at most 64 KiB; the rest is read by later steps).
    func writeInbound(_ text: String) {
        let bytes = Array(text.utf8)
        let sent = bytes.withUnsafeBytes { send(peerFD, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        precondition(sent == bytes.count, "the test wrote more than the socket buffer takes")
        connection.readable(buffer: buffer)
    }

    /// The peer reads everything the connection has written so far; then the connection flushes what waited,
    /// feeds input it held back, and reads more input if it may, as its loop would.
    func readOutbound() -> [UInt8] {
        var output: [UInt8] = []
        while true {
            let count = recv(peerFD, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
            guard count > 0 else { break }
            output += UnsafeRawBufferPointer(rebasing: buffer[0..<count])
        }
        connection.state.withLock { connection.flushLocked(&$0) }
        connection.resumeHeldInput(buffer: buffer)
        // What epoll would report: more input, read only while the output is under the mark.
        if heldBytes == 0 && queuedBytes < connection.limits.outboundHighWater {
            connection.readable(buffer: buffer)
        }
        return output
    }

    /// Bytes waiting in the connection's outbound queue (not yet taken by the socket).
    var queuedBytes: Int { connection.state.withLock { $0.outbound.count } }

    /// Input read but held back by back-pressure.
    var heldBytes: Int { connection.held.count }
}
