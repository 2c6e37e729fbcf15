import ArgumentParsing
import Glibc
import JSON
import JSONRPC

/// `passbridge-relay PATH`: connects to the daemon's socket and copies stdin to it and its replies to stdout
/// (what `socat - UNIX-CONNECT:PATH` does), so shell clients need nothing else.
///
/// Written against the daemon's back-pressure: the socket is non-blocking, replies are read whenever they
/// arrive, input is sent only when the socket takes it, and at most 1 MiB of input waits in between (stdin is
/// not read meanwhile). At end of stdin the write side is shut down and replies are read until the daemon
/// closes. Requests sent and responses received are counted (either framing).
/// Returns the exit code: 0 when everything was sent and every request answered; 1 when the daemon closed, or
/// the connection failed, before that; 2 when the socket cannot be reached (no such file, no permission, …); 3
/// when nothing listens on it (connection refused: the socket file a killed daemon left behind).
func runRelay(path: String) -> Int32 {
    signal(SIGPIPE, SIG_IGN)
    var address = sockaddr_un()
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
        writeError("passbridge-relay: socket path too long: \(path)")
        return 2
    }
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard fd >= 0, connected == 0 else {
        let reason = errno
        writeError("passbridge-relay: cannot connect to \(path): \(String(cString: strerror(reason)))")
        return reason == ECONNREFUSED ? 3 : 2
    }
    let flags = fcntl(fd, F_GETFL)
    _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
    var relay = RelayState()
    return relay.run(socket: fd)
}

/// The relay's buffers and counters.
private struct RelayState {
    static let maxPending = 1 << 20

    var pending: [UInt8] = []
    var pendingOffset = 0
    var inputDone = false
    var writeShut = false
    var requests = MessageCounter(countRequests: true)
    var answers = MessageCounter(countRequests: false)
    var buffer = [UInt8](repeating: 0, count: 65536)

    mutating func run(socket fd: Int32) -> Int32 {
        while true {
            let unsent = pending.count - pendingOffset
            let readInput = !inputDone && unsent < RelayState.maxPending
            var polls = [
                pollfd(fd: readInput ? 0 : -1, events: Int16(POLLIN), revents: 0),
                pollfd(fd: fd, events: Int16(POLLIN) | (unsent > 0 ? Int16(POLLOUT) : 0), revents: 0),
            ]
            if poll(&polls, 2, -1) < 0 {
                if errno == EINTR { continue }
                return 1
            }
            if polls[1].revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                // A reset (the daemon closed with input of ours unread) is a close like any other: say what was lost.
                if count == 0 || (count < 0 && errno == ECONNRESET) { return finished() }
                if count < 0 && errno != EAGAIN && errno != EINTR {
                    writeError("passbridge-relay: connection to the daemon failed: \(String(cString: strerror(errno)))")
                    return 1
                }
                if count > 0 {
                    buffer.withUnsafeBytes { answers.feed(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                    guard buffer.withUnsafeBytes({ writeAllWaiting(1, UnsafeRawBufferPointer(rebasing: $0[0..<count])) }) else { return 1 }
                }
            }
            if polls[1].revents & Int16(POLLOUT) != 0 && unsent > 0 {
                let sent = pending.withUnsafeBytes { send(fd, $0.baseAddress! + pendingOffset, unsent, Int32(MSG_NOSIGNAL)) }
                if sent < 0 && (errno == EPIPE || errno == ECONNRESET) { return finished() }
                if sent < 0 && errno != EAGAIN && errno != EINTR {
                    writeError("passbridge-relay: the daemon stopped taking input: \(String(cString: strerror(errno)))")
                    return 1
                }
                if sent > 0 { pendingOffset += sent }
                if pendingOffset == pending.count {
                    pending.removeAll(keepingCapacity: true)
                    pendingOffset = 0
                }
            }
            if readInput && polls[0].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
                if count > 0 {
                    buffer.withUnsafeBytes { requests.feed(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                    pending += buffer[0..<count]
                } else if count == 0 || (errno != EAGAIN && errno != EINTR) {
                    inputDone = true
                    requests.finish()
                }
            }
            if inputDone && pending.isEmpty && !writeShut {
                shutdown(fd, Int32(SHUT_WR))
                writeShut = true
            }
        }
    }

    /// The daemon closed: success only if all input went out and every request was answered. The message says
    /// which: input read but not sent, requests unanswered, or stdin still open with nothing owed either way.
    mutating func finished() -> Int32 {
        answers.finish()
        if pending.count > pendingOffset {
            writeError("passbridge-relay: the daemon closed the connection before all input was sent")
            return 1
        }
        guard answers.count >= requests.count else {
            writeError(
                "passbridge-relay: the daemon closed the connection with \(requests.count - answers.count) of \(requests.count) requests unanswered"
            )
            return 1
        }
        guard writeShut else {
            writeError("passbridge-relay: the daemon closed the connection before the end of input")
            return 1
        }
        return 0
    }
}

/// Counts JSON-RPC requests (`method` and `id`) or responses (`id`, no `method`) in a byte stream, batches
/// element by element.
private struct MessageCounter {
    let countRequests: Bool
    var framer = Framer(maxMessageBytes: 1 << 30)
    var count = 0

    init(countRequests: Bool) { self.countRequests = countRequests }

    mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        var found = 0
        let requests = countRequests
        framer.feed(bytes) { event in found += MessageCounter.counted(event, requests: requests) }
        count += found
    }

    mutating func finish() {
        var found = 0
        let requests = countRequests
        framer.finish { event in found += MessageCounter.counted(event, requests: requests) }
        count += found
    }

    private static func counted(_ event: FrameEvent, requests countRequests: Bool) -> Int {
        guard case .message(let body) = event, let json = try? JSON.parse(body) else { return 0 }
        let elements = json.arrayValue ?? [json]
        return elements.filter { element in
            guard element["id"] != nil else { return false }
            return countRequests == (element["method"] != nil)
        }.count
    }
}

/// Writes all of `bytes` to `fd`, waiting with poll(2) when it is non-blocking and full; false on error.
private func writeAllWaiting(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
        if written > 0 {
            offset += written
        } else if written < 0 && errno == EINTR {
            continue
        } else if written < 0 && errno == EAGAIN {
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            _ = poll(&poller, 1, -1)
        } else {
            return false
        }
    }
    return true
}
