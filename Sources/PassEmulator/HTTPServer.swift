import CMicroHTTPD
import Dispatch
import Glibc
import Synchronization

/// Something that turns a request into a response; called on libmicrohttpd's connection threads,
/// so implementations guard their own state.
public protocol HTTPResponder: AnyObject, Sendable {
    func respond(to request: HTTPRequest) -> HTTPResponse
}

/// Errors starting the HTTP server.
public enum HTTPServerError: Error, CustomStringConvertible {
    case socket(String, Int32)
    case address(String)
    case daemonFailed

    public var description: String {
        switch self {
        case .socket(let call, let code): return "\(call) failed: \(String(cString: strerror(code)))"
        case .address(let host): return "\(host) is not an IPv4 address"
        case .daemonFailed: return "libmicrohttpd could not start"
        }
    }
}

/// An HTTP/1.1 server on an IPv4 address (127.0.0.1 unless told otherwise) built on GNU libmicrohttpd: a pool of
/// epoll threads, one per processor (at least 2), each serving many connections. A response with a `delay` (an
/// injected latency) suspends its connection instead of holding a thread, so it never stalls another request.
/// The listening socket has TCP_NODELAY, which accepted sockets inherit. The `Date` header is the responder's
/// business (MHD's own is off).
public final class HTTPServer: @unchecked Sendable {
    /// The bound port (useful when started with port 0).
    public let port: UInt16
    private let responderBox: Unmanaged<ResponderBox>
    private let suspended: Suspended
    private var daemon: OpaquePointer?

    /// Binds `host`:`port` (0 = any free port; `host` an IPv4 address, 0.0.0.0 for every interface) and starts
    /// serving with `responder`, at most `connectionLimit` connections at once (nil: libmicrohttpd's default, 1,020;
    /// past the limit a connection waits in the listen queue until one ends).
    public init(port: UInt16, host: String = "127.0.0.1", responder: HTTPResponder, connectionLimit: Int? = nil) throws(HTTPServerError) {
        var address = in_addr()
        guard inet_pton(AF_INET, host, &address) == 1 else { throw .address(host) }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw .socket("socket", errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr = address
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { let code = errno; close(fd); throw .socket("bind", code) }
        guard listen(fd, 64) == 0 else { let code = errno; close(fd); throw .socket("listen", code) }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.port = UInt16(bigEndian: actual.sin_port)
        let suspended = Suspended()
        self.suspended = suspended
        let box = Unmanaged.passRetained(ResponderBox(responder, suspended: suspended))
        self.responderBox = box
        let flags = UInt32(
            MHD_USE_EPOLL.rawValue | MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
                | MHD_USE_SUPPRESS_DATE_NO_CLOCK.rawValue | MHD_USE_ERROR_LOG.rawValue)
        let threads = UInt32(max(2, sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        let completed:
            @convention(c) (
                UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<UnsafeMutableRawPointer?>?, MHD_RequestTerminationCode
            ) -> Void = requestCompleted
        let completedPointer = unsafeBitCast(completed, to: OpaquePointer.self)
        var options: [any CVarArg] = [
            MHD_OPTION.LISTEN_SOCKET.rawValue, fd,
            MHD_OPTION.CONNECTION_TIMEOUT.rawValue, UInt32(60),
            MHD_OPTION.THREAD_POOL_SIZE.rawValue, threads,
            MHD_OPTION.NOTIFY_COMPLETED.rawValue, completedPointer, Int(0),
        ]
        if let connectionLimit { options += [MHD_OPTION.CONNECTION_LIMIT.rawValue, UInt32(clamping: connectionLimit)] }
        options.append(MHD_OPTION.END.rawValue)
        let started = withVaList(options) { MHD_start_daemon_va(flags, 0, nil, nil, accessHandler, box.toOpaque(), $0) }
        guard let started else { box.release(); close(fd); throw .daemonFailed }
        self.daemon = started
    }

    /// Stops accepting and finishes the connections in progress. The listening socket was handed over with
    /// `MHD_OPTION_LISTEN_SOCKET`, so `MHD_stop_daemon` closes it (libmicrohttpd manual: a daemon that was not
    /// quiesced closes its listen socket); closing it here too could close a descriptor another thread reused.
    public func stop() {
        guard let daemon else { return }
        // libmicrohttpd must not be stopped with a connection suspended: they are resumed, and closed unanswered.
        suspended.resumeAll()
        MHD_stop_daemon(daemon)
        self.daemon = nil
        responderBox.release()
    }
}

final class ResponderBox {
    let responder: HTTPResponder
    let suspended: Suspended
    init(_ responder: HTTPResponder, suspended: Suspended) {
        self.responder = responder
        self.suspended = suspended
    }
}

/// The connections suspended while their response waits out its `delay`, each resumed once by whichever comes
/// first: its timer, or the server's stop (which closes it without its answer; nothing is suspended after it).
final class Suspended: Sendable {
    private let state = Mutex<(stopped: Bool, connections: Set<UInt>)>((false, []))

    /// Suspends `connection` (from its access handler) and resumes it after `delay`; false once the server stops.
    func suspend(_ connection: OpaquePointer, for delay: Duration) -> Bool {
        let key = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection)))
        let suspended = state.withLock { state in
            guard !state.stopped else { return false }
            state.connections.insert(key)
            MHD_suspend_connection(connection)
            return true
        }
        guard suspended else { return false }
        let (seconds, attoseconds) = delay.components
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)))
        {
            [self] in
            state.withLock { state in
                guard state.connections.remove(key) != nil, let connection = OpaquePointer(bitPattern: key) else { return }
                MHD_resume_connection(connection)
            }
        }
        return true
    }

    func resumeAll() {
        state.withLock { state in
            state.stopped = true
            for key in state.connections {
                if let connection = OpaquePointer(bitPattern: key) { MHD_resume_connection(connection) }
            }
            state.connections.removeAll()
        }
    }
}

/// Per-connection request state kept in libmicrohttpd's `con_cls` between upload calls, and the response held while
/// its connection is suspended.
final class UploadBuffer {
    var bytes: [UInt8] = []
    var delayed: HTTPResponse?
}

/// Collects name/value pairs from `MHD_get_connection_values`.
final class PairCollector {
    var pairs: [String: String] = [:]
}

/// Bytes handed to the truncating content reader.
final class TruncatedBody {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
}
