import Glibc
import Synchronization
import ThreadAffinity

/// The dedicated thread that runs the store's I/O, so that neither the daemon's event loop nor Swift's cooperative
/// pool ever waits on a disk, a lock or a database server. Jobs run one at a time, in the order they were
/// submitted.
///
/// Nothing runs before the first job: the thread is started by the first ``submit(_:)``, and it opens its
/// database (`open`) before running that job, so a daemon that has not yet needed its store neither maps SQLite's
/// pages nor holds a thread for it. When `open` fails, the job gets the error and the next job tries again.
///
/// Between jobs the worker sleeps on a condition variable, or, while it waits on the database's notification socket
/// (PostgreSQL's `LISTEN`, ``Look``), in `poll(2)` on that socket and on a pipe that a submit then writes to; it wakes
/// by itself only for deferred writes that are due (``Deferred``) and for a look that has no socket to wait on
/// (SQLite's). With no job, no deferred write and no look wanted it does not wake at all.
final class StoreExecutor: Sendable {
    typealias Job = @Sendable (Result<any StoreDatabase, any Error>) -> Void

    private struct Queue {
        var jobs: [Job] = []
        var closed = false
        var started = false
        var finished = false
        /// `wake()` was called: the worker asks its look and its deferred writes again before it sleeps.
        var woken = false
        /// While the worker sleeps: when it wakes by itself (nil: never) and whether it waits on a socket.
        var sleep: Sleep?
    }

    /// How the worker sleeps (`sleeping`): until `deadline` (monotonic ns; nil: until woken), and on the
    /// database's notification socket or not.
    struct Sleep: Sendable, Equatable {
        var deadline: UInt64?
        var socket: Bool
    }

    /// Looking for other processes' changes (`TokenStore`: the live logins), while `wanted` says so: at once when
    /// `owed` says so (a watch started or ended) or when the database already holds changes no socket will show
    /// (`StoreDatabase.changesWaiting`: what a job, a write or the last look read along with its answers), then
    /// when the database's notification socket is readable (`StoreDatabase.notificationSocket`), or, with no
    /// socket, every `interval`. When `run` throws, the failure is logged (`failures`) and the socket is not waited
    /// on until a look succeeds.
    struct Look: Sendable {
        let interval: Duration
        let wanted: @Sendable () -> Bool
        let owed: @Sendable () -> Bool
        /// Changes a look learned of but could not read: looked for again as `StoreDatabase.changesWaiting` is.
        let unread: @Sendable () -> Bool
        let run: @Sendable (any StoreDatabase) throws -> Void
    }

    /// Writes kept back to be made together (`TokenStore`'s cache writes): `due` says when they must be made (nil:
    /// none are waiting); `run` makes them. While `beforeJobs` says so they are also made before every job, so that
    /// a job reads what was written before it was submitted (not while writes that failed wait for their next try:
    /// each job would wait on the same lock, and use up their tries); and they are made before the worker ends
    /// (`run`'s second argument true: the last try).
    struct Deferred: Sendable {
        let due: @Sendable () -> UInt64?
        let beforeJobs: @Sendable () -> Bool
        let run: @Sendable (any StoreDatabase, _ last: Bool) -> Void
    }

    private let name: String
    private let open: @Sendable () throws -> any StoreDatabase
    /// The store's failures, logged by runs (what `run`'s jobs threw, and the deferred writes' failures).
    let failures: StoreFailureLog
    private let queue = Mutex(Queue())
    /// The worker sleeps on `condition`, or in `poll` on `pipe.read` (with a socket), which `pipe.write` ends.
    private let condition = ThreadCondition()
    private let pipe: (read: Int32, write: Int32)
    private let look = Mutex<Look?>(nil)
    private let deferred = Mutex<Deferred?>(nil)
    /// The database's connection is known to be gone (`StoreDatabase.connectionLost`, as of the last job or look).
    private let lost = Atomic<Bool>(false)
    /// Signalled once the worker has ended (`close(wait:)`).
    private let ended = ThreadCondition()

    /// - Parameters:
    ///   - log: receives the store's failures (`StoreFailureLog`).
    ///   - open: makes the database, on the worker thread, before the first job (again after a failure).
    init(name: String, log: EngineLog?, open: @escaping @Sendable () throws -> any StoreDatabase) {
        self.name = name
        self.open = open
        failures = StoreFailureLog(log: log)
        var fds: [Int32] = [-1, -1]
        precondition(Glibc.pipe(&fds) == 0, "pipe failed: \(String(cString: strerror(errno)))")
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        pipe = (fds[0], fds[1])
    }

    deinit {
        Glibc.close(pipe.read)
        Glibc.close(pipe.write)
    }

    /// Runs `job` on the worker with its database and returns its result (or rethrows its error, or the error of
    /// opening the database; a store error is also logged, by runs: `failures`). The caller resumes on its own
    /// actor, in the order the jobs ended, so calls of one actor keep their order.
    func run<T: Sendable>(
        isolation: isolated (any Actor)? = #isolation, _ job: @escaping @Sendable (any StoreDatabase) throws -> T
    ) async throws -> T {
        try await withCheckedThrowingContinuation(isolation: isolation) { [failures] (continuation: CheckedContinuation<T, any Error>) in
            submit { database in
                let result = Result { try job(try database.get()) }
                switch result {
                case .success: failures.succeeded()
                case .failure(let error as TokenStoreError): failures.failed(error)
                case .failure: break
                }
                continuation.resume(with: result)
            }
        }
    }

    /// Queues `job` without waiting for it; the first job starts the worker. After `close`, `job` gets a failure at
    /// once.
    func submit(_ job: @escaping Job) {
        let (start, closed) = notifying { queue -> (Bool, Bool) in
            if queue.closed { return (false, true) }
            queue.jobs.append(job)
            defer { queue.started = true }
            return (!queue.started, false)
        }
        if closed { job(.failure(TokenStoreError.io(operation: "the store is closed", errno: EBADF))) }
        if start { startThread(name: name) { [self] in self.work() } }
    }

    /// Changes the queue and wakes the worker however it sleeps: on the condition (signalled under its lock, so that
    /// a worker about to wait cannot miss it) or in `poll` (the pipe).
    private func notifying<T>(_ change: (inout Queue) -> T) -> T {
        condition.lock()
        let (result, polling) = queue.withLock { queue in (change(&queue), queue.sleep?.socket == true) }
        condition.signal()
        condition.unlock()
        if polling {
            var one: UInt8 = 1
            _ = Glibc.write(pipe.write, &one, 1)
        }
        return result
    }

    /// Sets the look for other processes' changes (`TokenStore`: the live logins).
    func setLook(_ work: Look) { look.withLock { $0 = work } }

    /// Sets the deferred writes (`TokenStore`'s cache writes).
    func setDeferred(_ work: Deferred) { deferred.withLock { $0 = work } }

    /// Wakes the worker so that it asks ``Look/wanted`` and ``Deferred/due`` again (a watch started, a deferred
    /// write was queued); costs nothing when the worker is not asleep or not started.
    func wake() { notifying { $0.woken = true } }

    /// Whether the database's connection was gone at the end of the last job or look: then the next operation
    /// reconnects, and nothing is gained by keeping writes back (`TokenStore.submit`).
    var connectionLost: Bool { lost.load(ordering: .relaxed) }

    /// How the worker sleeps now; nil while it works (or before it started).
    var sleeping: Sleep? { queue.withLock { $0.sleep } }

    /// Lets the worker finish what is queued, then end (closing its database); with `wait`, returns once it has, or
    /// at `until` at the latest. Returns false when the worker was still working then (a statement held by a server
    /// that does not answer).
    @discardableResult
    func close(wait: Bool = false, until: ContinuousClock.Instant? = nil) -> Bool {
        let started = notifying { queue in
            queue.closed = true
            return queue.started
        }
        guard wait, started else { return true }
        let deadline = until.map { TimerQueue.now() &+ Self.nanoseconds(ContinuousClock.now.duration(to: $0)) }
        ended.lock()
        defer { ended.unlock() }
        while !queue.withLock({ $0.finished }) {
            guard let deadline else {
                ended.wait()
                continue
            }
            if TimerQueue.now() >= deadline { return false }
            ended.wait(until: deadline)
        }
        return true
    }

    private func work() {
        run()
        // The database is closed by now (`run` held the only reference).
        ended.lock()
        queue.withLock { $0.finished = true }
        ended.broadcast()
        ended.unlock()
    }

    private func run() {
        var database: (any StoreDatabase)?
        var lastLook = TimerQueue.now()
        /// The last look failed and no operation has found the connection up since: its socket is not waited on (a
        /// connection that is gone reads as readable forever).
        var lookFailed = false
        /// After each operation: whether the connection is gone now (a reconnect by a job or a write makes its new
        /// socket one to wait on again).
        func noteConnection(_ database: any StoreDatabase) {
            let gone = database.connectionLost
            lost.store(gone, ordering: .relaxed)
            if !gone { lookFailed = false }
        }
        /// When the looks that have failed since the last one that worked began (monotonic ns; nil: the last worked).
        var lookFailingSince: UInt64?
        func runLook(_ look: Look, _ database: any StoreDatabase) {
            let began = TimerQueue.now()
            let failure: (any Error)?
            do {
                try look.run(database)
                failure = nil
            } catch {
                failure = error
            }
            lastLook = TimerQueue.now()
            noteConnection(database)
            // A look is a store operation too: one that worked ends a run of failures (an idle daemon's outage). One
            // that failed is tried again at the look's interval, and logged once looks have failed for
            // `lookFailureGrace` (a read held past the statement timeout at once; a server restart not at all).
            guard let failure else {
                lookFailingSince = nil
                failures.succeeded()
                return
            }
            lookFailed = true
            let since = lookFailingSince ?? began
            lookFailingSince = since
            if lastLook &- since >= Self.nanoseconds(Self.lookFailureGrace) {
                failures.failed(failure, "looking for other processes' login changes")
            }
        }
        while true {
            let (job, closed) = queue.withLock { queue -> (Job?, Bool) in
                if !queue.jobs.isEmpty { return (queue.jobs.removeFirst(), false) }
                return (nil, queue.closed)
            }
            let deferredWork = deferred.withLock { $0 }
            if let job {
                if database == nil {
                    do {
                        let opened = try open()
                        opened.thread.claim()
                        database = opened
                    } catch {
                        job(.failure(error))
                        continue
                    }
                }
                if let deferredWork, deferredWork.beforeJobs() { deferredWork.run(database!, false) }
                job(.success(database!))
                noteConnection(database!)
                continue
            }
            if closed {
                if let database, let deferredWork, deferredWork.due() != nil { deferredWork.run(database, true) }
                return
            }
            guard let database else {
                sleep(until: nil, socket: nil)
                continue
            }
            let now = TimerQueue.now()
            let flushDue = deferredWork?.due()
            if let deferredWork, let flushDue, flushDue <= now {
                deferredWork.run(database, false)
                noteConnection(database)
                continue
            }
            let wantedLook = look.withLock { $0 }.flatMap { $0.wanted() ? $0 : nil }
            // Changes the database already holds are on no socket: looked for now, and again after a look that
            // read some along with its own answers; so are changes a look could not read (a lock held it past the
            // statement timeout). Not right after a look that failed: the next one waits for the look's interval,
            // or for an operation that finds the connection up.
            if let wantedLook, wantedLook.owed() || (!lookFailed && (wantedLook.unread() || database.changesWaiting)) {
                runLook(wantedLook, database)
                continue
            }
            let socket = wantedLook.flatMap { _ in lookFailed ? nil : database.notificationSocket }
            // A look with a socket to wait on needs no timer; one without (SQLite's without an inotify watch, or a
            // connection that failed) comes at its interval.
            let lookDue = wantedLook.flatMap { look in socket == nil ? lastLook &+ Self.nanoseconds(look.interval) : nil }
            if let wantedLook, let lookDue, lookDue <= now {
                runLook(wantedLook, database)
                continue
            }
            let deadline = [flushDue, lookDue].compactMap { $0 }.min()
            if sleep(until: deadline, socket: socket), let wantedLook { runLook(wantedLook, database) }
        }
    }

    /// Sleeps until a job, a wake or the close comes (at once if one came since the worker last looked), `socket`
    /// (if any) is readable, or `deadline` (monotonic ns; nil: no limit). Returns whether `socket` is readable.
    @discardableResult
    private func sleep(until deadline: UInt64?, socket: Int32?) -> Bool {
        condition.lock()
        let pending = queue.withLock { queue in
            let pending = !queue.jobs.isEmpty || queue.closed || queue.woken
            queue.woken = false
            if !pending { queue.sleep = Sleep(deadline: deadline, socket: socket != nil) }
            return pending
        }
        defer { queue.withLock { $0.sleep = nil } }
        if pending {
            condition.unlock()
            return false
        }
        guard let socket else {
            if let deadline { condition.wait(until: deadline) } else { condition.wait() }
            condition.unlock()
            return false
        }
        condition.unlock()
        var fds = (pollfd(fd: pipe.read, events: Int16(POLLIN), revents: 0), pollfd(fd: socket, events: Int16(POLLIN), revents: 0))
        var timeout: Int32 = -1
        if let deadline {
            let now = TimerQueue.now()
            timeout = deadline <= now ? 0 : Int32(min((deadline - now + 999_999) / 1_000_000, UInt64(Int32.max)))
        }
        let ready = withUnsafeMutableBytes(of: &fds) { raw in
            poll(raw.baseAddress!.assumingMemoryBound(to: pollfd.self), 2, timeout)
        }
        if ready > 0, fds.0.revents != 0 {
            var bytes: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
            _ = Glibc.read(pipe.read, &bytes, MemoryLayout.size(ofValue: bytes))
        }
        return ready > 0 && fds.1.revents != 0
    }

    /// How long looks may fail before their failure is logged: longer than a server restart takes.
    static let lookFailureGrace = Duration.seconds(2)

    static func nanoseconds(_ duration: Duration) -> UInt64 {
        UInt64(max(0, duration.components.seconds)) &* 1_000_000_000 &+ UInt64(max(0, duration.components.attoseconds) / 1_000_000_000)
    }
}
