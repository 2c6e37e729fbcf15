import CMicroHTTPD
import Glibc

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

/// An HTTP/1.1 server on an IPv4 address (127.0.0.1 unless told otherwise) built on GNU libmicrohttpd (one thread per connection, so an
/// injected latency on one request never stalls another). The listening socket has TCP_NODELAY,
/// which accepted sockets inherit. The `Date` header is the responder's business (MHD's own is off).
public final class HTTPServer: @unchecked Sendable {
    /// The bound port (useful when started with port 0).
    public let port: UInt16
    private let responderBox: Unmanaged<ResponderBox>
    private var daemon: OpaquePointer?

    /// Binds `host`:`port` (0 = any free port; `host` an IPv4 address, 0.0.0.0 for every interface) and starts
    /// serving with `responder`.
    public init(port: UInt16, host: String = "127.0.0.1", responder: HTTPResponder) throws(HTTPServerError) {
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
        let box = Unmanaged.passRetained(ResponderBox(responder))
        self.responderBox = box
        let flags = UInt32(
            MHD_USE_THREAD_PER_CONNECTION.rawValue | MHD_USE_INTERNAL_POLLING_THREAD.rawValue
                | MHD_USE_POLL.rawValue | MHD_USE_SUPPRESS_DATE_NO_CLOCK.rawValue | MHD_USE_ERROR_LOG.rawValue)
        let completed:
            @convention(c) (
                UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<UnsafeMutableRawPointer?>?, MHD_RequestTerminationCode
            ) -> Void = requestCompleted
        let completedPointer = unsafeBitCast(completed, to: OpaquePointer.self)
        let started = withVaList([
            MHD_OPTION.LISTEN_SOCKET.rawValue, fd,
            MHD_OPTION.CONNECTION_TIMEOUT.rawValue, UInt32(60),
            MHD_OPTION.NOTIFY_COMPLETED.rawValue, completedPointer, Int(0),
            MHD_OPTION.END.rawValue,
        ]) { MHD_start_daemon_va(flags, 0, nil, nil, accessHandler, box.toOpaque(), $0) }
        guard let started else { box.release(); close(fd); throw .daemonFailed }
        self.daemon = started
    }

    /// Stops accepting and finishes the connections in progress. The listening socket was handed over with
    /// `MHD_OPTION_LISTEN_SOCKET`, so `MHD_stop_daemon` closes it (libmicrohttpd manual: a daemon that was not
    /// quiesced closes its listen socket); closing it here too could close a descriptor another thread reused.
    public func stop() {
        guard let daemon else { return }
        MHD_stop_daemon(daemon)
        self.daemon = nil
        responderBox.release()
    }
}

final class ResponderBox {
    let responder: HTTPResponder
    init(_ responder: HTTPResponder) { self.responder = responder }
}

/// Per-connection request state kept in libmicrohttpd's `con_cls` between upload calls.
final class UploadBuffer {
    var bytes: [UInt8] = []
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
