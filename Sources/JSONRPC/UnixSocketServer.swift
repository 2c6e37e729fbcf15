import CShims
import Glibc

/// Why the socket server could not start.
public enum SocketServerError: Error, CustomStringConvertible {
    /// The path does not fit `sun_path` (107 bytes).
    case pathTooLong(String)
    /// Another process accepts connections on the path.
    case alreadyInUse(String)
    /// Something that is not a socket sits at the path.
    case notASocket(String)
    /// A system call failed.
    case system(call: String, path: String, errno: Int32)

    public var description: String {
        switch self {
        case .pathTooLong(let path): return "socket path too long (max 107 bytes): \(path)"
        case .alreadyInUse(let path): return "another daemon is already listening on \(path) (stop it first, or use another --socket path)"
        case .notASocket(let path): return "\(path) exists and is not a socket; refusing to replace it"
        case .system("bind", let path, ENOENT):
            // The daemon makes the socket, not the folders above it (those are the service's: RuntimeDirectory=).
            return "bind \(path): \(errnoString(ENOENT)) (its directory does not exist: create it first)"
        case .system(let call, let path, let code): return "\(call) \(path): \(errnoString(code))"
        }
    }
}

/// Who may connect: the daemon's own user, root, every `--allow-uid`, and any process that has the
/// `--socket-group` as its primary or a supplementary group.
public struct SocketAccess: Sendable {
    /// `--socket-group`: the socket file becomes 0660 with this group, and peers in this group are allowed.
    public var group: UInt32?
    /// `--allow-uid`: further allowed peer uids; the socket file becomes 0666 so they can reach it, and the
    /// peer check alone decides.
    public var allowedUIDs: Set<UInt32> = []

    public init(group: UInt32? = nil, allowedUIDs: Set<UInt32> = []) {
        self.group = group
        self.allowedUIDs = allowedUIDs
    }

    /// True if a peer with these credentials may talk to the daemon.
    public func allows(_ peer: PeerCredentials) -> Bool {
        if peer.uid == geteuid() || peer.uid == 0 || allowedUIDs.contains(peer.uid) { return true }
        guard let group else { return false }
        return peer.gid == group || peer.groups.contains(group)
    }

    /// The reason a refused peer is told.
    public var refusal: String {
        // Root once, whether or not the daemon runs as root.
        var allowed = (geteuid() == 0 ? [] : ["uid \(geteuid())"]) + ["root"]
        allowed += allowedUIDs.subtracting([0, geteuid()]).sorted().map { "uid \($0)" }
        if let group { allowed.append("members of group \(group)") }
        return "this daemon serves only " + allowed.joined(separator: ", ")
    }

    /// The socket file's mode: 0666 with --allow-uid, 0660 with only --socket-group, else 0600.
    var fileMode: mode_t {
        if !allowedUIDs.isEmpty { return 0o666 }
        return group != nil ? 0o660 : 0o600
    }
}

/// A JSON-RPC server on a Unix stream socket: many concurrent peers on one epoll thread.
///
/// The socket file is created 0600 (0660 and chowned to the group with ``SocketAccess/group``, 0666 with
/// ``SocketAccess/allowedUIDs``); a stale file (nobody accepting) is replaced, a live one refused. Peers are
/// checked with SO_PEERCRED and SO_PEERGROUPS; a refused peer gets one -32005 line saying who may connect.
/// With systemd socket activation the inherited fd is served and never unlinked.
public final class UnixSocketServer: Sendable {
    private let loop = EventLoop()
    private let listenFD: Int32
    /// The file to unlink at shutdown (nil when inherited from systemd).
    public let path: String?
    private let access: SocketAccess
    private let limits: ConnectionLimits
    private let maxConnections: Int
    private let log = Logger(label: "socket")
    /// How long the listener rests when the process is out of file descriptors.
    static let acceptPauseNanos: UInt64 = 250_000_000

    /// Binds and listens on `path`.
    /// - Throws: ``SocketServerError`` (`alreadyInUse` when a live daemon answers on the path).
    public init(path: String, access: SocketAccess, limits: ConnectionLimits, maxConnections: Int = 4096) throws(SocketServerError) {
        signal(SIGPIPE, SIG_IGN)
        listenFD = try UnixSocketServer.bind(path: path, access: access)
        self.path = path
        self.access = access
        self.limits = limits
        self.maxConnections = maxConnections
    }

    /// Serves a listening socket inherited through systemd socket activation (`LISTEN_FDS`, fd 3).
    public init(inheritedFD: Int32, access: SocketAccess, limits: ConnectionLimits, maxConnections: Int = 4096) {
        signal(SIGPIPE, SIG_IGN)
        listenFD = inheritedFD
        _ = fcntl(inheritedFD, F_SETFD, FD_CLOEXEC)
        setNonBlocking(inheritedFD)
        path = nil
        self.access = access
        self.limits = limits
        self.maxConnections = maxConnections
    }

    /// The fd systemd passed when `LISTEN_PID` is this process and `LISTEN_FDS` ≥ 1, else nil.
    /// Clears the variables so children do not inherit them.
    public static func systemdListenFD() -> Int32? {
        guard let pid = getenv("LISTEN_PID").map({ String(cString: $0) }), let fds = getenv("LISTEN_FDS").map({ String(cString: $0) })
        else {
            return nil
        }
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_FDNAMES")
        guard Int32(pid) == getpid(), let count = Int(fds), count >= 1 else { return nil }
        return 3
    }

    /// Accepts and serves until ``shutdown()`` has drained every connection; blocks the caller.
    public func run(_ factory: @escaping RPCHandlerFactory) {
        loop.watchListener(listenFD)
        loop.acceptHandler = { [self] in acceptPending(factory) }
        loop.onShutdown = { [self] in stopListening() }
        loop.run()
    }

    /// Stops accepting, removes the socket file, drains and stops; callable from any thread.
    public func shutdown() { loop.requestShutdown() }

    private func stopListening() {
        loop.unwatchListener()
        close(listenFD)
        if let path { unlink(path) }
        log.info("stopped accepting connections")
    }

    private func acceptPending(_ factory: @escaping RPCHandlerFactory) {
        for _ in 0..<64 {
            let fd = cshims_accept(listenFD, 1)
            if fd < 0 {
                let code = errno
                if code == EMFILE || code == ENFILE {
                    // Connections waiting stay in the backlog; established ones are served meanwhile.
                    log.warning(
                        "accept failed: \(errnoString(code)); not accepting for \(UnixSocketServer.acceptPauseNanos / 1_000_000) ms")
                    loop.pauseListener(for: UnixSocketServer.acceptPauseNanos)
                } else if code != EAGAIN && code != EWOULDBLOCK && code != EINTR && code != ECONNABORTED {
                    log.warning("accept failed: \(errnoString(code))")
                }
                return
            }
            var pid: pid_t = 0
            var uid: uid_t = 0
            var gid: gid_t = 0
            guard cshims_peer_credentials(fd, &pid, &uid, &gid) == 0 else {
                log.warning("SO_PEERCRED failed: \(errnoString()); peer refused")
                close(fd)
                continue
            }
            let peer = PeerCredentials(pid: pid, uid: uid, gid: gid, groups: UnixSocketServer.peerGroups(fd, uid: uid, gid: gid))
            guard access.allows(peer) else {
                log.warning("peer \(peer) refused: not the daemon's user, root, an --allow-uid or in the --socket-group")
                refuse(fd, OutgoingMessage.response(id: nil, error: .accessDenied(access.refusal)))
                continue
            }
            guard loop.connectionCount < maxConnections else {
                log.warning("peer \(peer) refused: \(maxConnections) connections already open")
                close(fd)
                continue
            }
            let connection = loop.add(readFD: fd, writeFD: fd, isSocket: true, peer: peer, limits: limits, factory: factory)
            log.debug("connection \(connection.number) from \(peer)")
        }
    }

    /// Tells a refused peer why in one line (the socket buffer takes it; nothing is waited for), then closes.
    private func refuse(_ fd: Int32, _ body: [UInt8]) {
        let line = Framing.ndjson.frame(body)
        _ = line.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        Glibc.shutdown(fd, Int32(SHUT_WR))
        close(fd)
    }

    /// The peer's supplementary groups: SO_PEERGROUPS, else the group list of the peer uid's account.
    static func peerGroups(_ fd: Int32, uid: uid_t, gid: gid_t) -> [UInt32] {
        var capacity: Int32 = 64
        while capacity <= 65536 {
            var groups = [gid_t](repeating: 0, count: Int(capacity))
            let count = cshims_peer_groups(fd, &groups, capacity)
            if count >= 0 { return Array(groups[0..<Int(count)]) }
            guard errno == ERANGE else { break }
            capacity *= 8
        }
        guard let account = getpwuid(uid) else { return [] }
        var count: Int32 = 64
        var groups = [gid_t](repeating: 0, count: Int(count))
        if getgrouplist(account.pointee.pw_name, gid, &groups, &count) < 0 {
            groups = [gid_t](repeating: 0, count: Int(count))
            guard getgrouplist(account.pointee.pw_name, gid, &groups, &count) >= 0 else { return [] }
        }
        return Array(groups[0..<Int(count)])
    }

    /// Whether `path` may be served: it fits `sun_path`, its directory exists, and it holds nothing or a socket
    /// nobody accepts on (a stale one, which binding replaces). Checked again when binding; a daemon checks it first,
    /// before it makes anything.
    /// - Returns: the socket address of `path`, and whether a stale socket is there.
    /// - Throws: `pathTooLong`, `notASocket`, `alreadyInUse`, `system("bind", path, ENOENT)` for a missing directory.
    @discardableResult
    public static func checkServable(path: String) throws(SocketServerError) -> (address: sockaddr_un, stale: Bool) {
        let bytes = Array(path.utf8)
        var address = sockaddr_un()
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw .pathTooLong(path) }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let missing = errno == ENOENT
            let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
            var folder = stat()
            if missing, stat(directory.isEmpty ? "/" : directory, &folder) != 0 {
                throw .system(call: "bind", path: path, errno: ENOENT)
            }
            return (address, false)
        }
        guard info.st_mode & S_IFMT == S_IFSOCK else { throw .notASocket(path) }
        if isAlive(&address) { throw .alreadyInUse(path) }
        return (address, true)
    }

    private static func bind(path: String, access: SocketAccess) throws(SocketServerError) -> Int32 {
        let checked = try checkServable(path: path)
        var address = checked.address
        if checked.stale { unlink(path) }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw .system(call: "socket", path: path, errno: errno) }
        // The file is created 0600 (umask), before any thread exists; the group variant widens it after chown.
        let oldMask = umask(0o177)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        let bindErrno = errno
        umask(oldMask)
        guard bound == 0 else {
            close(fd)
            if bindErrno == EADDRINUSE { throw .alreadyInUse(path) }
            throw .system(call: "bind", path: path, errno: bindErrno)
        }
        if let group = access.group {
            guard chown(path, uid_t.max, group) == 0 else {
                let code = errno
                close(fd)
                unlink(path)
                throw .system(call: "chown", path: path, errno: code)
            }
        }
        guard chmod(path, access.fileMode) == 0 else {
            let code = errno
            close(fd)
            unlink(path)
            throw .system(call: "chmod", path: path, errno: code)
        }
        guard listen(fd, 512) == 0 else {
            let code = errno
            close(fd)
            unlink(path)
            throw .system(call: "listen", path: path, errno: code)
        }
        return fd
    }

    /// True if something accepts connections at `address`.
    private static func isAlive(_ address: inout sockaddr_un) -> Bool {
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard probe >= 0 else { return false }
        defer { close(probe) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(probe, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return result == 0 || errno == EAGAIN
    }
}
