import CShims
import Glibc
import JSON
import Synchronization
import ThreadAffinity

/// One peer: a reader that parses and dispatches on its event loop's thread, and one serialized
/// writer that any thread may feed (ARCHITECTURE.md "Threads").
///
/// Writes go straight to the non-blocking fd from the calling thread under the connection's lock;
/// what the fd does not take waits in the outbound queue and is flushed by the loop when the fd is
/// writable. Nothing is ever dropped: once the unsent output passes ``ConnectionLimits/outboundHighWater``
/// the reader stops before the next message, even inside one read, keeps the rest of that read, and goes on
/// where it stopped when the output has drained below the mark. A peer that never reads thus costs at most
/// the mark plus one message's answers (a batch's answers count as they accumulate); a socket peer that
/// reads nothing for the stall timeout is disconnected. A failed write closes the connection.
public final class Connection: Sendable {
    /// Serial number, unique in the process (for logs).
    public let number: UInt64
    /// The peer's credentials (Unix-socket peers only).
    public let peerCredentials: PeerCredentials?

    let readFD: Int32
    let writeFD: Int32
    let isSocket: Bool
    let limits: ConnectionLimits
    /// Strong: a handler may answer after the transport ended; the cycle ends when the loop drops the connection.
    let loop: EventLoop

    /// The serial executor of this connection's event loop: actors that take it (the engine) run on the loop
    /// thread, between epoll waits, in the order their jobs were enqueued (ARCHITECTURE.md, "Threads").
    public var executor: any TimerExecutor { loop }

    /// The same loop as a task executor: a task that prefers it (`Task.immediate(executorPreference:)`) runs its
    /// nonisolated code on the loop too, instead of on Swift's global pool.
    public var taskExecutor: any TaskExecutor { loop }
    let state: Mutex<WriterState>
    let log = Logger(label: "jsonrpc")

    /// Reader state: touched only on the loop thread.
    nonisolated(unsafe) var framer: Framer
    nonisolated(unsafe) var handler: RPCHandler?
    nonisolated(unsafe) var closedNotified = false
    /// Input read but not yet fed to the framer, held while the output is over the high-water mark.
    nonisolated(unsafe) var held: [UInt8] = []
    /// Set after a message whose answers brought the output over the high-water mark: the framer pauses.
    nonisolated(unsafe) var overBudget = false
    /// The input pipe hung up while input was held: it left epoll, and is read to its end, directly, once the held
    /// input is used.
    nonisolated(unsafe) var inputHungUp = false
    /// The epoll masks registered for the read and write fds (`.max` once removed); guarded by `state`.
    nonisolated(unsafe) var registeredRead: UInt32 = 0
    nonisolated(unsafe) var registeredWrite: UInt32 = 0

    init(number: UInt64, readFD: Int32, writeFD: Int32, isSocket: Bool, peer: PeerCredentials?, limits: ConnectionLimits, loop: EventLoop) {
        self.number = number
        self.readFD = readFD
        self.writeFD = writeFD
        self.isSocket = isSocket
        self.peerCredentials = peer
        self.limits = limits
        self.loop = loop
        self.framer = Framer(maxMessageBytes: limits.maxMessageBytes)
        self.state = Mutex(WriterState())
    }

    // MARK: Public API (any thread)

    /// In debug builds, stops the process unless called on the thread that reads this connection (its loop's):
    /// for callers whose state belongs to that thread, as ``RPCHandler/handle(method:params:id:on:)`` does.
    public func checkReaderThread(_ what: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
        loop.thread.check(what(), file: file, line: line)
    }

    /// Answers request `id` with `result`. Ignored if `id` is not awaiting an answer.
    public func respond(to id: RequestID, result: JSON) {
        deliver(id: id, bytes: OutgoingMessage.response(id: id, result: result))
    }

    /// Answers request `id` with a result that is already JSON text (compact), e.g. a document serialized once.
    /// Ignored if `id` is not awaiting an answer.
    public func respond(to id: RequestID, encodedResult: [UInt8]) {
        deliver(id: id, bytes: OutgoingMessage.response(id: id, encodedResult: encodedResult))
    }

    /// Answers request `id` with an error object. Ignored if `id` is not awaiting an answer.
    public func respond(to id: RequestID, error: ErrorObject) {
        deliver(id: id, bytes: OutgoingMessage.response(id: id, error: error))
    }

    /// Sends a notification; delivered in call order, interleaved in order with responses.
    public func notify(method: String, params: JSON) {
        let bytes = OutgoingMessage.notification(method: method, params: params)
        state.withLock { state in enqueueLocked(&state, bytes) }
    }

    /// Sends a daemon→host request with a fresh id (`"pb-N"`) and calls `completion` once: with the
    /// peer's result or error (``RequestFailure/peer(_:)``), with ``RequestFailure/timedOut`` after `timeout`,
    /// or with ``RequestFailure/connectionClosed`` if the connection closes first.
    /// The completion runs on the loop thread (or the caller's, if already closed) and must not block.
    public func request(
        method: String, params: JSON, timeout: Duration, completion: @escaping @Sendable (Result<JSON, RequestFailure>) -> Void
    ) {
        let deadline = monotonicNanos() + timeout.nanoseconds
        let accepted = state.withLock { state -> Bool in
            guard !state.closing else { return false }
            state.nextOutgoingID += 1
            let id = RequestID("pb-\(state.nextOutgoingID)")
            state.outgoing[id] = OutgoingRequest(deadline: deadline, completion: completion)
            enqueueLocked(&state, OutgoingMessage.request(method: method, params: params, id: id))
            return true
        }
        if accepted {
            loop.needsTicks()  // the request's timeout
        } else {
            completion(.failure(.connectionClosed))
        }
    }

    /// Requests from the peer not yet answered.
    public var inFlightRequests: Int { state.withLock { $0.inFlight } }

    /// The framing the peer chose (undetermined until its first message).
    public var framing: Framing { state.withLock { $0.framing } }

    // MARK: Writer (under the lock)

    private func deliver(id: RequestID, bytes: [UInt8]) {
        state.withLock { state in
            guard let index = state.pending.firstIndex(where: { $0.id == id }) else {
                log.debug("connection \(number): response for \(id) which is not awaiting one, dropped")
                return
            }
            let slot = state.pending.remove(at: index)
            state.inFlight -= 1
            if let batch = slot.batch {
                batch.append(bytes)
                batch.remaining -= 1
                if batch.remaining == 0 && batch.sealed {
                    enqueueBatchLocked(&state, batch)
                }
            } else {
                enqueueLocked(&state, bytes)
            }
            if state.closing && state.inFlight == 0 { loop.wake() }
        }
    }

    /// Appends one framed message and writes what the fd takes now (unless corked by the reader).
    func enqueueLocked(_ state: inout WriterState, _ body: [UInt8]) {
        guard !state.writeFailed else { return }
        if state.outbound.isEmpty { state.lastWriteProgress = monotonicNanos() }
        state.outbound.append(body, framing: state.framing)
        if state.corked { return }
        // A job the loop runs (an engine call resuming) usually writes its notifications and its response one after
        // the other: they go out together once the loop's jobs are done (`EventLoop.holdWrite`).
        if loop.holdWrite(self) { return }
        flushLocked(&state)
    }

    /// Writes what the loop held back while it ran its jobs. Loop thread.
    func flushHeld() {
        state.withLock { flushLocked(&$0) }
    }

    /// Appends a finished batch's answers as one array (one message), copying each answer once.
    func enqueueBatchLocked(_ state: inout WriterState, _ batch: Batch) {
        guard !state.writeFailed else { return }
        if state.outbound.isEmpty { state.lastWriteProgress = monotonicNanos() }
        state.outbound.append(array: batch.takeAnswers(), framing: state.framing)
        if !state.corked { flushLocked(&state) }
    }

    /// Writes queued bytes until the fd would block, then sets the epoll interest to match.
    func flushLocked(_ state: inout WriterState) {
        while !state.outbound.isEmpty && !state.writeFailed {
            let written = state.outbound.writeFirst { bytes in
                isSocket
                    ? Glibc.send(writeFD, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
                    : write(writeFD, bytes.baseAddress, bytes.count)
            }
            if written > 0 {
                state.lastWriteProgress = monotonicNanos()
            } else if written < 0 && errno == EINTR {
                continue
            } else if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                break
            } else {
                log.debug("connection \(number): write failed: \(errnoString()); closing")
                state.writeFailed = true
                loop.wake()
            }
        }
        if state.writeFailed { state.outbound.removeAll() }
        updateInterestLocked(&state)
    }

    /// Registers for writability while output waits, and for readability unless paused.
    func updateInterestLocked(_ state: inout WriterState) {
        // Once the loop has closed the fds their numbers may belong to another peer: hands off.
        guard !state.detached else { return }
        let queued = state.outbound.count
        let wantWrite: UInt32 = (queued > 0 && !state.writeFailed) ? EPOLLOUT.rawValue : 0
        if wantWrite != 0 && isSocket { loop.needsTicks() }  // the stall timeout
        let underMark = queued < limits.outboundHighWater
        let wantRead: UInt32 = (!state.readDone && !state.inputHeld && underMark) ? EPOLLIN.rawValue : 0
        if state.inputHeld && underMark && !state.resumeRequested && !state.readDone {
            // Held input is fed on the loop thread; this may be another one.
            state.resumeRequested = true
            loop.wake()
        }
        if readFD == writeFD {
            loop.setInterest(self, fd: readFD, direction: 0, events: wantRead | wantWrite)
        } else {
            // A finished input leaves epoll entirely: a pipe without writers reports EPOLLHUP forever.
            if state.readDone {
                loop.removeInterest(self, fd: readFD, direction: 0)
            } else {
                loop.setInterest(self, fd: readFD, direction: 0, events: wantRead)
            }
            loop.setInterest(self, fd: writeFD, direction: 1, events: wantWrite)
        }
    }

    // MARK: Lifecycle (loop thread)

    /// Stops reading, tells the handler once, fails daemon→host requests, and starts the drain clock.
    func beginClosing() {
        loop.thread.check("connection \(number) beginClosing")
        let outgoing = state.withLock { state -> [OutgoingRequest] in
            if !state.closing {
                state.closing = true
                // Leftovers are answered a little before the timeout, leaving a grace period to flush them.
                let timeout = limits.shutdownTimeout.nanoseconds
                state.flushGrace = min(500_000_000, timeout / 5)
                state.drainDeadline = monotonicNanos() + timeout - state.flushGrace
            }
            state.readDone = true
            updateInterestLocked(&state)
            let requests = Array(state.outgoing.values)
            state.outgoing = [:]
            return requests
        }
        loop.needsTicks()  // the drain deadline
        for request in outgoing { request.completion(.failure(.connectionClosed)) }
        if !closedNotified {
            closedNotified = true
            handler?.connectionClosed(self)
        }
    }

    /// Whether the loop's tick must look at this connection (``check(now:)``): a daemon→host request waits for its
    /// answer, a socket's output waits for the peer to read it (the stall timeout), or the connection is closing.
    var hasDeadline: Bool {
        state.withLock { state in !state.outgoing.isEmpty || state.closing || (isSocket && state.outbound.count > 0) }
    }

    /// What the loop should do with this connection now.
    enum Verdict { case keep, close }

    /// Periodic and post-event checks: timeouts of daemon→host requests, stalled peers, drain end.
    func check(now: UInt64) -> Verdict {
        loop.thread.check("connection \(number) check")
        var expired: [OutgoingRequest] = []
        let verdict = state.withLock { state -> Verdict in
            if !state.outgoing.isEmpty {
                for (id, request) in state.outgoing where request.deadline <= now {
                    expired.append(request)
                    state.outgoing[id] = nil
                }
            }
            let queued = state.outbound.count
            if isSocket && queued > 0 && now &- state.lastWriteProgress > limits.stallTimeout.nanoseconds && now > state.lastWriteProgress {
                log.warning("connection \(number): peer read nothing for \(limits.stallTimeout), disconnecting")
                state.writeFailed = true
                return .close
            }
            if state.writeFailed { return .close }
            guard state.closing else { return .keep }
            if state.inFlight == 0 && queued == 0 { return .close }
            if now >= state.drainDeadline {
                if state.inFlight > 0 { answerRemainingLocked(&state) }
                if state.outbound.count == 0 { return .close }
                // One more grace period for the last answers to flush, then give up.
                if now >= state.drainDeadline + state.flushGrace { return .close }
            }
            return .keep
        }
        for request in expired { request.completion(.failure(.timedOut)) }
        return verdict
    }

    /// Answers every request still waiting with -32003.
    private func answerRemainingLocked(_ state: inout WriterState) {
        let leftovers = state.pending
        state.pending = []
        state.inFlight = 0
        var batches: [ObjectIdentifier: Batch] = [:]
        for request in leftovers {
            let bytes = OutgoingMessage.response(id: request.id, error: .shuttingDown())
            if let batch = request.batch {
                batch.append(bytes)
                batches[ObjectIdentifier(batch)] = batch
            } else {
                enqueueLocked(&state, bytes)
            }
        }
        for batch in batches.values where batch.sealed {
            enqueueBatchLocked(&state, batch)
        }
    }

    /// The final step, before the loop closes the fds: tells the handler (if not yet), stops all writing
    /// and fails daemon→host requests still waiting.
    func finish() {
        loop.thread.check("connection \(number) finish")
        if !closedNotified {
            closedNotified = true
            handler?.connectionClosed(self)
        }
        let outgoing = state.withLock { state -> [OutgoingRequest] in
            state.closing = true
            state.writeFailed = true
            state.detached = true
            state.outbound.removeAll()
            state.inputHeld = false
            let requests = Array(state.outgoing.values)
            state.outgoing = [:]
            return requests
        }
        for request in outgoing { request.completion(.failure(.connectionClosed)) }
        handler = nil
        held = []
    }
}
