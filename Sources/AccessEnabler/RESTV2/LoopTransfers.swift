import CCurl
import Glibc
import Synchronization
import ThreadAffinity

/// An event loop's own wait, offered to the HTTP transfers of the engines that run on that loop
/// (`HTTPLoops.drive(_:on:)`): their sockets are waited on in the loop's wait and their timeouts are the loop's
/// timers, so that a request is sent, and its answer read, on the loop's thread with no other thread woken. The
/// daemon gives its event loop (`Bridge`, from `JSONRPC.LoopDescriptors`).
public protocol DescriptorLoop: AnyObject, Sendable {
    /// Loop thread: `ready(readable, writable)` runs on the loop thread whenever `fd` is readable (`reading`) or
    /// writable (`writing`), until `forget(_:)`; a second watch of `fd` replaces the first, with no system call when
    /// it waits for the same events. `fd` is forgotten before it is closed.
    func watch(_ fd: Int32, reading: Bool, writing: Bool, _ ready: @escaping (_ readable: Bool, _ writable: Bool) -> Void)
    /// Loop thread: stops waiting on `fd`.
    func forget(_ fd: Int32)
    /// Any thread: runs `body` on the loop thread once `delay` has passed, unless the handle cancels it first (on
    /// the loop thread).
    func run(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> Scheduled
}

/// The event loops that drive the HTTP transfers of the engines running on them.
public enum HTTPLoops {
    /// The loops, by the identity of the executor they are.
    private static let loops = Mutex<[ObjectIdentifier: LoopTransfers]>([:])

    /// From now on, the HTTP transfers of engines whose executor is `executor` are driven by `loop` (which runs that
    /// executor's jobs) instead of the transport's own thread. Once per loop; later calls for it do nothing.
    public static func drive(_ executor: any SerialExecutor, on loop: any DescriptorLoop) {
        loops.withLock { loops in
            let key = ObjectIdentifier(executor)
            if loops[key] == nil { loops[key] = LoopTransfers(loop: loop) }
        }
    }

    /// The transfers of the loop `client` runs on, if that loop drives its own.
    static func transfers(of client: RestClient) -> LoopTransfers? {
        loops.withLock { $0[ObjectIdentifier(client.executor)] }
    }
}

/// The transfers of the engines that run on one event loop, driven on that loop's thread: one libcurl multi handle
/// in socket mode ("libcurl-multi": `curl_multi_socket_action`), started by the first request. Every method runs
/// on the loop's thread (the engine's `RestClient` calls from there, and the loop calls back from there), so the
/// handle and the transfers need no lock.
final class LoopTransfers: @unchecked Sendable {
    private let loop: any DescriptorLoop
    /// The multi handle, made by the first request; the failure when libcurl could not be loaded.
    private var multi: Result<UnsafeMutableRawPointer, TransportFailure>?
    private var running: [UnsafeMutableRawPointer: Transfer] = [:]
    /// Easy handles of finished transfers, reset to their defaults, for the next ones (making and freeing one per
    /// request was 3% of a getAuthorization's instructions); at most `idleLimit`.
    private var idle: [UnsafeMutableRawPointer] = []
    private static let idleLimit = 8
    /// When libcurl wants to be called again for its timeouts (monotonic ns), and the loop timer set for it.
    private var deadline: UInt64?
    private var timerSet: (deadline: UInt64, timer: Scheduled)?
    /// The sockets libcurl made for connections (its sockopt callback) and has not closed yet (its close-socket
    /// callback, which closes them here), each with whether it carries plain HTTP/1.1 (an http backend, on loopback).
    /// Between two transfers a kept-alive one stays in the loop's wait for reading ("parked") rather than being taken
    /// out and put back, two epoll_ctl(2) calls per request. Readable while parked, it is taken out: the server
    /// closed it, or sent bytes no request asked for, which libcurl 7.88 would read as the next request's answer
    /// (one resource's decision handed to another). A plain one is shut down as well, so that libcurl finds it dead
    /// when it next looks and sends the request on a new one; over TLS such bytes are a record (an HTTP/2 PING, a
    /// session ticket) that libcurl reads as it should.
    private var connectionSockets: [curl_socket_t: Bool] = [:]

    init(loop: any DescriptorLoop) { self.loop = loop }

    func perform(isolation: isolated (any Actor)?, _ request: RESTRequest, timeout: Duration) async -> HTTPResult {
        await withCheckedContinuation(isolation: isolation) { continuation in
            switch started() {
            case .failure(let failure):
                continuation.resume(returning: .failure(failure))
            case .success(let multi):
                guard let transfer = Transfer(request, timeout: timeout, continuation: continuation, reusing: idle.popLast()) else {
                    continuation.resume(returning: .failure(.network))
                    return
                }
                let context = Unmanaged.passUnretained(self).toOpaque()
                _ = ccurl_setopt_pointer(transfer.easy, CURLOPT_SOCKOPTDATA, context)
                // A C callback captures nothing: one for each kind of connection.
                let opened: curl_sockopt_callback =
                    request.url.hasPrefix("http:")
                    ? { context, socket, purpose in LoopTransfers.opened(context, socket, purpose, plain: true) }
                    : { context, socket, purpose in LoopTransfers.opened(context, socket, purpose, plain: false) }
                _ = ccurl_setopt_sockopt(transfer.easy, opened)
                _ = ccurl_setopt_pointer(transfer.easy, CURLOPT_CLOSESOCKETDATA, context)
                _ = ccurl_setopt_closesocket(transfer.easy) { context, socket in
                    Unmanaged<LoopTransfers>.fromOpaque(context!).takeUnretainedValue().closing(socket)
                    return Glibc.close(socket)
                }
                running[transfer.easy] = transfer
                ccurl_multi_add_handle(multi, transfer.easy)
                act(multi, on: CURL_SOCKET_TIMEOUT, events: 0)
            }
        }
    }

    /// The multi handle, made (with its callbacks) by the first request.
    private func started() -> Result<UnsafeMutableRawPointer, TransportFailure> {
        if let multi { return multi }
        let made: Result<UnsafeMutableRawPointer, TransportFailure>
        if let reason = ccurl_load() {
            made = .failure(.unavailable(String(cString: reason)))
        } else if let handle = ccurl_multi_init() {
            ccurl_global_init(Int(CURL_GLOBAL_DEFAULT))
            _ = ccurl_multi_setopt_long(handle, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
            // Unretained: the loop's transfers live as long as the process (`HTTPLoops`).
            let context = Unmanaged.passUnretained(self).toOpaque()
            _ = ccurl_multi_setopt_pointer(handle, CURLMOPT_SOCKETDATA, context)
            _ = ccurl_multi_setopt_pointer(handle, CURLMOPT_TIMERDATA, context)
            _ = ccurl_multi_setopt_socket(handle) { _, socket, what, context, _ in
                Unmanaged<LoopTransfers>.fromOpaque(context!).takeUnretainedValue().socket(socket, what)
                return 0
            }
            _ = ccurl_multi_setopt_timer(handle) { _, milliseconds, context in
                Unmanaged<LoopTransfers>.fromOpaque(context!).takeUnretainedValue().timer(milliseconds)
                return 0
            }
            made = .success(handle)
        } else {
            made = .failure(.unavailable("curl_multi_init failed"))
        }
        multi = made
        return made
    }

    /// libcurl's socket callback: wait on `socket` as `what` says, or stop.
    private func socket(_ socket: curl_socket_t, _ what: Int32) {
        let plain = connectionSockets[socket]
        let connection = plain != nil
        if what == CURL_POLL_REMOVE {
            if let plain {
                loop.watch(socket, reading: true, writing: false) { [unowned self] _, _ in
                    if plain { Glibc.shutdown(socket, Int32(SHUT_RDWR)) }
                    loop.forget(socket)
                }
            } else {
                loop.forget(socket)
            }
            return
        }
        // Another socket (the resolver's) is closed by libcurl without a word: a watch its number left behind
        // must not pass for this one's.
        if !connection { loop.forget(socket) }
        loop.watch(socket, reading: what & CURL_POLL_IN != 0, writing: what & CURL_POLL_OUT != 0) { [unowned self] readable, writable in
            guard case .success(let multi) = multi else { return }
            act(multi, on: socket, events: (readable ? CURL_CSELECT_IN : 0) | (writable ? CURL_CSELECT_OUT : 0))
        }
    }

    /// libcurl's sockopt callback, for each socket it makes: one made for a connection is recorded, after a watch its
    /// number left behind (a socket closed without the close-socket callback) is dropped.
    private static func opened(_ context: UnsafeMutableRawPointer?, _ socket: curl_socket_t, _ purpose: curlsocktype, plain: Bool) -> Int32
    {
        guard purpose == CURLSOCKTYPE_IPCXN else { return CURL_SOCKOPT_OK }
        let transfers = Unmanaged<LoopTransfers>.fromOpaque(context!).takeUnretainedValue()
        transfers.loop.forget(socket)
        transfers.connectionSockets[socket] = plain
        return CURL_SOCKOPT_OK
    }

    /// libcurl's close-socket callback: `socket` is closed next.
    private func closing(_ socket: curl_socket_t) {
        connectionSockets[socket] = nil
        loop.forget(socket)
    }

    /// libcurl's timer callback: call again with `CURL_SOCKET_TIMEOUT` in `milliseconds` (-1: never).
    private func timer(_ milliseconds: Int) {
        deadline = milliseconds < 0 ? nil : TimerQueue.now() &+ UInt64(milliseconds) &* 1_000_000
        arm()
    }

    /// Sets the loop timer for `deadline`, cancelling the one set for another time (or for none). libcurl moves its
    /// timeout with every request (0 ms to start it, then the request's timeout, then none); a timer left behind for
    /// each move was a queue of stale timers as long as the requests of one timeout period.
    private func arm() {
        guard deadline != timerSet?.deadline else { return }
        timerSet?.timer.cancel()
        timerSet = nil
        guard let deadline else { return }
        let now = TimerQueue.now()
        let timer = loop.run(after: .nanoseconds(Int64(deadline > now ? deadline - now : 0))) { [unowned self] in
            timerSet = nil
            if let due = self.deadline, due <= TimerQueue.now(), case .success(let multi) = multi {
                self.deadline = nil
                act(multi, on: CURL_SOCKET_TIMEOUT, events: 0)
            }
            arm()
        }
        timerSet = (deadline, timer)
    }

    /// Lets libcurl do what `events` on `socket` (or its timeouts) allow, then finishes the transfers that ended.
    private func act(_ multi: UnsafeMutableRawPointer, on socket: curl_socket_t, events: Int32) {
        var active: Int32 = 0
        ccurl_multi_socket_action(multi, socket, events, &active)
        var left: Int32 = 0
        while let message = ccurl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                let transfer = running.removeValue(forKey: easy)
            else { continue }
            let code = message.pointee.data.result
            ccurl_multi_remove_handle(multi, easy)
            transfer.finish(code)
            if idle.count < Self.idleLimit {
                ccurl_easy_reset(easy)
                idle.append(easy)
            } else {
                ccurl_easy_cleanup(easy)
            }
        }
    }
}
