import CShims
import Glibc
import Synchronization
import ThreadAffinity

/// One epoll thread serving a set of connections (and optionally a listening socket), and the serial executor of
/// every actor its connections' handlers run (the engine, its REST client), as well as the task executor their
/// calls' tasks prefer.
///
/// Requests are read, parsed, dispatched and — when the handler answers at once — written on this
/// thread with no hop: each cross-thread wake-up costs about 65 µs on a 2-vCPU VM. Jobs enqueued on the loop as
/// an executor run on it in the order they were enqueued, between epoll waits; one enqueued from another thread
/// (a store or HTTP completion resuming an engine call) wakes it.
/// Everything but ``wake()``, ``requestShutdown()``, ``enqueue(_:)`` and ``setInterest(_:fd:direction:events:)``
/// runs on the loop thread.
final class EventLoop: SerialExecutor, TaskExecutor, TimerExecutor, @unchecked Sendable {
    private static let wakeToken = UInt64.max
    private static let jobsToken = UInt64.max - 2
    private static let listenerToken = UInt64.max - 1
    private static let tickNanos: UInt64 = 100_000_000

    let epollFD: Int32
    private let wakeFD: Int32
    /// Signalled when a job is queued from another thread: the loop then only runs its jobs, without the
    /// per-connection pass a ``wake()`` makes.
    private let jobsFD: Int32
    private let shutdownRequested = Atomic<Bool>(false)
    /// Set while some connection has a deadline that the loop's 100 ms tick watches (``Connection/hasDeadline``), and
    /// cleared by a tick that finds none: with it clear the loop sleeps until an event or a timer, where an idle
    /// daemon with a host connected woke ten times a second.
    private let ticking = Atomic<Bool>(false)
    /// The thread that runs the loop, claimed by ``run()``; debug builds check it wherever loop-thread state is used.
    let thread = ThreadAffinity()
    private let log = Logger(label: "jsonrpc")
    private static let numbers = Atomic<UInt64>(0)

    /// Jobs enqueued on the loop as an executor, oldest first.
    private let jobs = Mutex<[UnownedJob]>([])
    /// Work to run at a time (`run(after:_:)`): the engines' timers.
    private let timers = Mutex(TimerQueue())

    /// Loop-thread state.
    private var connections: [UInt64: Connection] = [:]
    private var shuttingDown = false
    private var readBuffer: UnsafeMutableRawBufferPointer
    /// Called when the listener is readable (socket server).
    var acceptHandler: (() -> Void)?
    /// The listening socket, and when it is taken out of epoll, the time to watch it again.
    private var listenerFD: Int32 = -1
    private var listenerPausedUntil: UInt64?
    var onShutdown: (() -> Void)?
    /// Stop once no connection is left (stdio).
    var stopWhenEmpty = false

    init() {
        epollFD = cshims_epoll_create()
        precondition(epollFD >= 0, "epoll_create1 failed: \(errnoString())")
        wakeFD = cshims_eventfd()
        precondition(wakeFD >= 0, "eventfd failed: \(errnoString())")
        _ = cshims_epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, EPOLLIN.rawValue, EventLoop.wakeToken)
        jobsFD = cshims_eventfd()
        precondition(jobsFD >= 0, "eventfd failed: \(errnoString())")
        _ = cshims_epoll_ctl(epollFD, EPOLL_CTL_ADD, jobsFD, EPOLLIN.rawValue, EventLoop.jobsToken)
        readBuffer = .allocate(byteCount: 65536, alignment: 16)
    }

    deinit {
        Glibc.close(epollFD)
        Glibc.close(wakeFD)
        Glibc.close(jobsFD)
        readBuffer.deallocate()
    }

    /// Wakes the loop from any thread (it re-checks drains and shutdown).
    func wake() { cshims_eventfd_signal(wakeFD) }

    // MARK: the loop as a serial executor

    /// Queues `job` to run on the loop thread after the jobs already queued; from another thread, wakes the loop
    /// when the queue was empty (the loop drains it whole before it waits again).
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let first = jobs.withLock { jobs in
            jobs.append(job)
            return jobs.count == 1
        }
        if first, !thread.isOwner { cshims_eventfd_signal(jobsFD) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }

    /// As a task executor preference (`Connection.taskExecutor`), the loop also runs the nonisolated parts of the
    /// tasks that prefer it, which would otherwise hop to Swift's global pool and back.
    func asUnownedTaskExecutor() -> UnownedTaskExecutor { UnownedTaskExecutor(ordinary: self) }

    /// Stops the process unless called on the loop thread (what `assumeIsolated` and `preconditionIsolated` ask).
    func checkIsolated() {
        precondition(thread.isOwner, "not on the event loop that is this actor's executor")
    }

    /// Runs the queued jobs, including those they enqueue, until the queue is empty; what they write to
    /// connections goes out once they are done, one write per connection (`holdWrite`).
    private func runJobs() {
        runningJobs = true
        defer {
            runningJobs = false
            for connection in heldWrites { connection.flushHeld() }
            heldWrites.removeAll(keepingCapacity: true)
        }
        while true {
            var batch: [UnownedJob] = []
            jobs.withLock { swap(&batch, &$0) }
            if batch.isEmpty { return }
            for job in batch { job.runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor()) }
        }
    }

    // MARK: descriptors watched for others (the engines' HTTP transfers, `LoopDescriptors`)

    /// Tokens of watched descriptors: `watchToken | fd` (connection tokens stay below, special ones above).
    private static let watchToken: UInt64 = 1 << 62
    /// Loop-thread state: each watched fd's epoll events, and what to call when it is ready.
    private var watchers: [Int32: (events: UInt32, ready: (_ readable: Bool, _ writable: Bool) -> Void)] = [:]

    /// Waits on `fd` in the loop's own wait: `ready` runs on the loop thread whenever it is readable (`reading`) or
    /// writable (`writing`), until `forget(_:)`; a second watch of `fd` replaces the first, with no system call
    /// when it waits for the same events. `fd` must be forgotten before it is closed. Loop thread.
    func watch(_ fd: Int32, reading: Bool, writing: Bool, _ ready: @escaping (_ readable: Bool, _ writable: Bool) -> Void) {
        thread.check("EventLoop.watch")
        let events = (reading ? EPOLLIN.rawValue : 0) | (writing ? EPOLLOUT.rawValue : 0)
        let token = Self.watchToken | UInt64(UInt32(bitPattern: fd))
        switch watchers.updateValue((events, ready), forKey: fd)?.events {
        case nil: _ = cshims_epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, events, token)
        case events: break
        default: _ = cshims_epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, events, token)
        }
    }

    /// Stops waiting on `fd` (before it is closed). Loop thread.
    func forget(_ fd: Int32) {
        thread.check("EventLoop.forget")
        guard watchers.removeValue(forKey: fd) != nil else { return }
        _ = cshims_epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, 0, 0)
    }

    /// Loop-thread state of `runJobs`: set while it runs, and the connections written to meanwhile.
    private var runningJobs = false
    private var heldWrites: [Connection] = []

    /// Whether `connection`'s queued output may wait for the end of the jobs the loop is running (then it is
    /// written after them); false from any other thread, or outside them. Called under the connection's lock.
    func holdWrite(_ connection: Connection) -> Bool {
        guard thread.isOwner, runningJobs else { return false }
        if !heldWrites.contains(where: { $0 === connection }) { heldWrites.append(connection) }
        return true
    }

    private var hasJobs: Bool { jobs.withLock { !$0.isEmpty } }

    /// Runs `body` on the loop once `delay` has passed; the loop's epoll wait ends by then. From another thread,
    /// wakes the loop so that it waits again with the new deadline.
    @discardableResult
    func run(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> Scheduled {
        let deadline = TimerQueue.deadline(after: delay)
        let id = timers.withLock { $0.add(at: deadline, body) }
        if !thread.isOwner { cshims_eventfd_signal(jobsFD) }
        return Scheduled { [weak self] in self?.timers.withLock { $0.cancel(id) } }
    }

    /// Runs the timers due at `now`, then the jobs they queued.
    private func runTimers(now: UInt64) {
        let due = timers.withLock { $0.takeDue(now: now) }
        for body in due { body() }
        if !due.isEmpty { runJobs() }
    }

    /// Asks the loop, from any thread or a signal thread, to stop accepting and drain every connection.
    func requestShutdown() {
        shutdownRequested.store(true, ordering: .sequentiallyConsistent)
        wake()
    }

    var isShuttingDown: Bool { shutdownRequested.load(ordering: .relaxed) }

    func watchListener(_ fd: Int32) {
        thread.check("EventLoop.watchListener")
        listenerFD = fd
        _ = cshims_epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, EPOLLIN.rawValue, EventLoop.listenerToken)
    }

    /// Stops watching the listener for `nanos` (out of file descriptors: a readable listener would wake the
    /// loop at once, again and again). Loop thread.
    func pauseListener(for nanos: UInt64) {
        thread.check("EventLoop.pauseListener")
        guard listenerPausedUntil == nil, listenerFD >= 0 else { return }
        _ = cshims_epoll_ctl(epollFD, EPOLL_CTL_DEL, listenerFD, 0, 0)
        listenerPausedUntil = monotonicNanos() + nanos
    }

    /// Forgets the listener (it is being closed). Loop thread.
    func unwatchListener() {
        thread.check("EventLoop.unwatchListener")
        if listenerPausedUntil == nil, listenerFD >= 0 { _ = cshims_epoll_ctl(epollFD, EPOLL_CTL_DEL, listenerFD, 0, 0) }
        listenerFD = -1
        listenerPausedUntil = nil
    }

    /// Creates a connection on non-blocking fds, gives it its handler, and starts reading.
    @discardableResult
    func add(
        readFD: Int32, writeFD: Int32, isSocket: Bool, peer: PeerCredentials?, limits: ConnectionLimits, factory: RPCHandlerFactory
    ) -> Connection {
        thread.check("EventLoop.add")
        let number = EventLoop.numbers.add(1, ordering: .relaxed).newValue
        let connection = Connection(
            number: number, readFD: readFD, writeFD: writeFD, isSocket: isSocket, peer: peer, limits: limits, loop: self)
        connection.handler = factory(connection)
        connections[number] = connection
        _ = cshims_epoll_ctl(epollFD, EPOLL_CTL_ADD, readFD, EPOLLIN.rawValue, number << 1)
        connection.registeredRead = EPOLLIN.rawValue
        if writeFD != readFD {
            _ = cshims_epoll_ctl(epollFD, EPOLL_CTL_ADD, writeFD, 0, number << 1 | 1)
            connection.registeredWrite = 0
        }
        if shuttingDown { connection.beginClosing() }
        return connection
    }

    var connectionCount: Int { connections.count }

    /// Sets the epoll mask of one of a connection's fds; called under the connection's lock, which
    /// guards `registeredRead` and `registeredWrite`.
    func setInterest(_ connection: Connection, fd: Int32, direction: UInt64, events: UInt32) {
        let token = connection.number << 1 | direction
        if direction == 0 {
            guard connection.registeredRead != events, connection.registeredRead != .max else { return }
            connection.registeredRead = events
        } else {
            guard connection.registeredWrite != events, connection.registeredWrite != .max else { return }
            connection.registeredWrite = events
        }
        _ = cshims_epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, events, token)
    }

    /// Removes one of a connection's fds from epoll; called under the connection's lock.
    func removeInterest(_ connection: Connection, fd: Int32, direction: UInt64) {
        if direction == 0 {
            guard connection.registeredRead != .max else { return }
            connection.registeredRead = .max
        } else {
            guard connection.registeredWrite != .max else { return }
            connection.registeredWrite = .max
        }
        _ = cshims_epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, 0, 0)
    }

    /// Puts a connection's read fd back in epoll, with no events yet, after ``removeInterest(_:fd:direction:)`` took
    /// it out (a FIFO that a writer opened again); called under the connection's lock.
    func watchAgain(_ connection: Connection, fd: Int32) {
        guard connection.registeredRead == .max else { return }
        connection.registeredRead = 0
        _ = cshims_epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, 0, connection.number << 1)
    }

    /// Any thread: a connection has a deadline that the tick must watch (``Connection/hasDeadline``); wakes the loop
    /// so that it stops waiting without a timeout.
    func needsTicks() {
        if !ticking.exchange(true, ordering: .sequentiallyConsistent), !thread.isOwner { cshims_eventfd_signal(jobsFD) }
    }

    /// Runs until shutdown has drained every connection (or, for stdio, the one connection closed).
    func run() {
        thread.claim()
        let maxEvents: Int32 = 64
        var tokens = [UInt64](repeating: 0, count: Int(maxEvents))
        var masks = [UInt32](repeating: 0, count: Int(maxEvents))
        var lastTick = monotonicNanos()
        while true {
            runJobs()
            let ticks = shuttingDown || listenerPausedUntil != nil || ticking.load(ordering: .sequentiallyConsistent)
            var timeout: Int32 = hasJobs ? 0 : ticks ? 100 : -1
            if timeout != 0, let untilTimer = timers.withLock({ $0.millisecondsToNext(now: TimerQueue.now()) }) {
                timeout = timeout < 0 ? untilTimer : min(timeout, untilTimer)
            }
            let count = cshims_epoll_wait(epollFD, &tokens, &masks, maxEvents, timeout)
            if count < 0 && errno != EINTR {
                log.error("epoll_wait failed: \(errnoString())")
                return
            }
            let now = monotonicNanos()
            // Timers already due run before the input of this wait is handled: work another thread scheduled at once
            // (a login another connection rewrote: the permits cached for it are dropped) comes before a request
            // that was sent after it and arrived in the same wait.
            runTimers(now: TimerQueue.now())
            for index in 0..<max(0, Int(count)) {
                handle(token: tokens[index], events: masks[index], now: now)
            }
            runJobs()
            runTimers(now: TimerQueue.now())
            if shutdownRequested.load(ordering: .relaxed) && !shuttingDown { beginShutdown() }
            if let until = listenerPausedUntil, now >= until {
                listenerPausedUntil = nil
                _ = cshims_epoll_ctl(epollFD, EPOLL_CTL_ADD, listenerFD, EPOLLIN.rawValue, EventLoop.listenerToken)
            }
            if now &- lastTick >= EventLoop.tickNanos {
                lastTick = now
                // Cleared first: a deadline set from another thread meanwhile sets it again.
                ticking.store(false, ordering: .sequentiallyConsistent)
                var deadlines = false
                for connection in Array(connections.values) {
                    if connection.check(now: now) == .close {
                        close(connection)
                    } else if connection.hasDeadline {
                        deadlines = true
                    }
                }
                if deadlines { ticking.store(true, ordering: .sequentiallyConsistent) }
            }
            if (shuttingDown || stopWhenEmpty) && connections.isEmpty { return }
        }
    }

    private func handle(token: UInt64, events: UInt32, now: UInt64) {
        if token == EventLoop.jobsToken {
            cshims_eventfd_drain(jobsFD)  // the jobs run after this batch of events
            return
        }
        if token == EventLoop.wakeToken {
            cshims_eventfd_drain(wakeFD)
            for connection in Array(connections.values) {
                connection.resumeHeldInput(buffer: readBuffer)
                if connection.check(now: now) == .close { close(connection) }
            }
            return
        }
        if token == EventLoop.listenerToken {
            acceptHandler?()
            return
        }
        if token >> 62 == 1 {
            let hangup = events & (EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0
            watchers[Int32(bitPattern: UInt32(truncatingIfNeeded: token))]?.ready(
                events & EPOLLIN.rawValue != 0 || hangup, events & EPOLLOUT.rawValue != 0 || hangup)
            return
        }
        guard let connection = connections[token >> 1] else { return }
        let hangup = events & (EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0
        if token & 1 == 0 {
            if events & EPOLLIN.rawValue != 0 {
                connection.readable(buffer: readBuffer)
            } else if hangup {
                // A hang-up while reading is paused or done: read what is left (pipes), or, once the
                // input has ended, treat the peer as gone (a fully closed socket).
                if connection.state.withLock({ $0.readDone }) {
                    connection.state.withLock { $0.writeFailed = true }
                } else {
                    connection.readable(buffer: readBuffer)
                }
            }
        }
        if events & EPOLLOUT.rawValue != 0 {
            connection.state.withLock { connection.flushLocked(&$0) }
            connection.resumeHeldInput(buffer: readBuffer)
        } else if hangup && (token & 1 == 1) {
            connection.state.withLock { state in
                state.writeFailed = true
                removeInterest(connection, fd: connection.writeFD, direction: 1)
            }
        }
        if connection.check(now: now) == .close { close(connection) }
    }

    private func beginShutdown() {
        shuttingDown = true
        onShutdown?()
        for connection in Array(connections.values) {
            connection.beginClosing()
            if connection.check(now: monotonicNanos()) == .close { close(connection) }
        }
    }

    private func close(_ connection: Connection) {
        guard connections.removeValue(forKey: connection.number) != nil else { return }
        connection.finish()
        _ = cshims_epoll_ctl(epollFD, EPOLL_CTL_DEL, connection.readFD, 0, 0)
        Glibc.close(connection.readFD)
        if connection.writeFD != connection.readFD {
            _ = cshims_epoll_ctl(epollFD, EPOLL_CTL_DEL, connection.writeFD, 0, 0)
            Glibc.close(connection.writeFD)
        }
        log.debug("connection \(connection.number) closed")
    }
}
