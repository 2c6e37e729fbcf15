import Glibc

/// `passbridge --relay PATH`: connects to the daemon's socket and copies stdin to it and its output
/// to stdout (what `socat - UNIX-CONNECT:PATH` does), so shell clients need nothing else.
/// At end of stdin the write side is shut down and replies are read until the daemon closes.
/// Returns the exit code: 0, or 2 when the socket cannot be reached.
func runRelay(path: String) -> Int32 {
    signal(SIGPIPE, SIG_IGN)
    var address = sockaddr_un()
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
        writeError("passbridge: socket path too long: \(path)")
        return 2
    }
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard fd >= 0, connected == 0 else {
        writeError("passbridge: cannot connect to \(path): \(String(cString: strerror(errno)))")
        return 2
    }
    var polls = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0), pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        if poll(&polls, 2, -1) < 0 {
            if errno == EINTR { continue }
            return 1
        }
        if polls[1].revents != 0 {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { return 0 }
            guard buffer.withUnsafeBytes({ copyAll(1, $0.baseAddress!, count) }) else { return 1 }
        }
        if polls[0].fd >= 0 && polls[0].revents != 0 {
            let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count <= 0 {
                shutdown(fd, Int32(SHUT_WR))
                polls[0].fd = -1
            } else if !buffer.withUnsafeBytes({ copyAll(fd, $0.baseAddress!, count) }) {
                return 0
            }
        }
    }
}

private func copyAll(_ fd: Int32, _ start: UnsafeRawPointer, _ count: Int) -> Bool {
    var offset = 0
    while offset < count {
        let written = write(fd, start + offset, count - offset)
        if written < 0 && errno == EINTR { continue }
        if written <= 0 { return false }
        offset += written
    }
    return true
}

/// Writes one line to stderr.
func writeError(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { copyAll(2, $0.baseAddress!, $0.count) }
}

/// Writes text to stdout (`--help`, `--version`).
func writeOut(_ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { copyAll(1, $0.baseAddress!, $0.count) }
}
