import FoundationEssentials
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
final class StoreExecutor: Sendable {
    typealias Job = @Sendable (Result<any StoreDatabase, any Error>) -> Void

    private struct Queue {
        var jobs: [Job] = []
        var closed = false
        var started = false
        var finished = false
    }

    /// Work the worker does between jobs: once `interval` has passed without a job, while `wanted` says so.
    struct IdleWork: Sendable {
        let interval: Duration
        let wanted: @Sendable () -> Bool
        let run: @Sendable (any StoreDatabase) -> Void
    }

    private let name: String
    private let open: @Sendable () throws -> any StoreDatabase
    private let queue = Mutex(Queue())
    private let condition = ThreadCondition()
    private let idle = Mutex<IdleWork?>(nil)

    /// - Parameter open: makes the database, on the worker thread, before the first job (again after a failure).
    init(name: String, open: @escaping @Sendable () throws -> any StoreDatabase) {
        self.name = name
        self.open = open
    }

    /// Runs `job` on the worker with its database and returns its result (or rethrows its error, or the error of
    /// opening the database). The caller resumes on its own actor, in the order the jobs ended, so calls of one
    /// actor keep their order.
    func run<T: Sendable>(
        isolation: isolated (any Actor)? = #isolation, _ job: @escaping @Sendable (any StoreDatabase) throws -> T
    ) async throws -> T {
        try await withCheckedThrowingContinuation(isolation: isolation) { (continuation: CheckedContinuation<T, any Error>) in
            submit { database in continuation.resume(with: Result { try job(try database.get()) }) }
        }
    }

    /// Queues `job` without waiting for it; the first job starts the worker. After `close`, `job` gets a failure at
    /// once.
    func submit(_ job: @escaping Job) {
        condition.lock()
        let (start, closed) = queue.withLock { queue -> (Bool, Bool) in
            if queue.closed { return (false, true) }
            queue.jobs.append(job)
            defer { queue.started = true }
            return (!queue.started, false)
        }
        condition.signal()
        condition.unlock()
        if closed { job(.failure(TokenStoreError.io(operation: "the store is closed", errno: EBADF))) }
        if start { startThread(name: name) { [self] in self.work() } }
    }

    /// Sets the work done between jobs (`TokenStore`: looking for other processes' login changes).
    func setIdleWork(_ work: IdleWork) { idle.withLock { $0 = work } }

    /// Wakes the worker so that it asks `IdleWork.wanted` again (a watch started).
    func wake() {
        condition.lock()
        condition.signal()
        condition.unlock()
    }

    /// Lets the worker finish what is queued, then end (closing its database); with `wait`, returns once it has.
    func close(wait: Bool = false) {
        condition.lock()
        queue.withLock { $0.closed = true }
        condition.broadcast()
        while wait, queue.withLock({ $0.started && !$0.finished }) { condition.wait() }
        condition.unlock()
    }

    private func work() {
        run()
        // The database is closed by now (`run` held the only reference).
        condition.lock()
        queue.withLock { $0.finished = true }
        condition.broadcast()
        condition.unlock()
    }

    private func run() {
        var database: (any StoreDatabase)?
        var lastIdle = TimerQueue.now()
        while true {
            // The idle work runs at its interval also while jobs keep coming, so that a busy store still learns
            // of other processes' changes.
            let work = database == nil ? nil : idle.withLock({ $0 }).flatMap { $0.wanted() ? $0 : nil }
            let due = work.map { lastIdle &+ Self.nanoseconds($0.interval) }
            if let work, let database, let due, TimerQueue.now() >= due {
                work.run(database)
                lastIdle = TimerQueue.now()
                continue
            }
            condition.lock()
            var job: Job?
            var closed = false
            var timedOut = false
            while job == nil, !closed, !timedOut {
                (job, closed) = queue.withLock { queue in queue.jobs.isEmpty ? (nil, queue.closed) : (queue.jobs.removeFirst(), false) }
                guard job == nil, !closed else { break }
                if let due {
                    condition.wait(until: due)
                    timedOut = TimerQueue.now() >= due
                } else {
                    condition.wait()
                    // A watch may have started: the idle work is asked again.
                    timedOut = database != nil && idle.withLock({ $0 })?.wanted() == true
                }
            }
            condition.unlock()
            if job == nil, !closed { continue }
            guard let job else { return }
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
            job(.success(database!))
        }
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        UInt64(max(0, duration.components.seconds)) &* 1_000_000_000 &+ UInt64(max(0, duration.components.attoseconds) / 1_000_000_000)
    }
}
