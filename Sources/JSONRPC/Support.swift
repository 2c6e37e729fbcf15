import Glibc

/// Monotonic time in nanoseconds (CLOCK_MONOTONIC).
func monotonicNanos() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

extension Duration {
    /// Whole nanoseconds, clamped at zero.
    var nanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }
}

/// The string for an errno value.
func errnoString(_ code: Int32 = errno) -> String {
    String(cString: strerror(code))
}

/// Starts a detached POSIX thread running `body` (no Foundation, no Swift concurrency).
func startThread(_ body: @escaping @Sendable () -> Void) {
    final class Box: @unchecked Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(
        &thread, nil,
        { raw in
            let box = Unmanaged<AnyObject>.fromOpaque(raw!).takeRetainedValue() as! Box
            box.body()
            return nil
        }, context)
    precondition(result == 0, "pthread_create failed: \(errnoString(result))")
    pthread_detach(thread)
}

/// Sets O_NONBLOCK on `fd`.
func setNonBlocking(_ fd: Int32) {
    let flags = fcntl(fd, F_GETFL)
    if flags >= 0 { _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
}

/// Writes all of `bytes` to a blocking fd; false on error.
@discardableResult
func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
        if written < 0 {
            if errno == EINTR { continue }
            return false
        }
        offset += written
    }
    return true
}

/// Credentials of a Unix-socket peer, read with SO_PEERCRED and SO_PEERGROUPS when it connected.
public struct PeerCredentials: Sendable, Hashable, CustomStringConvertible {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32
    /// Supplementary groups of the peer process.
    public var groups: [UInt32]

    public init(pid: Int32, uid: UInt32, gid: UInt32, groups: [UInt32] = []) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.groups = groups
    }

    public var description: String { "pid=\(pid) uid=\(uid) gid=\(gid)" }
}

/// Limits and timeouts of a connection (Protocol/README.md; ARCHITECTURE.md).
public struct ConnectionLimits: Sendable {
    /// Largest accepted message body in bytes (default 16 MiB).
    public var maxMessageBytes = 16 << 20
    /// Requests from the peer awaiting their response; beyond it a request is answered -32004.
    public var maxInFlightRequests = 1024
    /// Largest batch (elements); a larger one is answered with one -32600.
    public var maxBatchSize = 1000
    /// Unsent outbound bytes above which the connection stops reading (backpressure; nothing is dropped).
    public var outboundHighWater = 1 << 20
    /// A socket peer with unsent output that reads nothing for this long is disconnected.
    public var stallTimeout: Duration = .seconds(10)
    /// Time to finish outstanding requests after the peer closed or the daemon began shutting down.
    public var shutdownTimeout: Duration = .seconds(5)

    public init() {}
}
