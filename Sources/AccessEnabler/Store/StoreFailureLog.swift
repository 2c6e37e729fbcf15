import Synchronization
import ThreadAffinity

/// The store's failures as an operator reads them: a run of failures (a PostgreSQL server down, a SQLite file
/// locked by another process) is one warning when it starts, at most one more every `interval` while it lasts,
/// each counting the failures not logged since the one before, and one when an operation succeeds again. Every
/// failed call still gets its own STORE500 with the reason (Protocol/README.md, "The store"); only the log is
/// spared a line per call (a breaking pass counted 1,165 of them for 8 PostgreSQL restarts).
///
/// Fed by the store's worker (`StoreExecutor.run`, the looks), counting store operations (one call may make
/// several); `log` gets `store failure: REASON` and `store failure: REASON (N more failed operations since the last
/// line)` at `.warning`, `store working again after S s (N failed operations in all)` at `.info`. Cache writes
/// given up are logged apart (`dropped`).
final class StoreFailureLog: Sendable {
    /// The least time between two lines of one run of failures.
    static let interval = Duration.seconds(10)

    private struct Run {
        /// When the run's first failure came, and when its last line was logged (monotonic ns).
        var start: UInt64
        var lastLine: UInt64
        var failures = 1
        var notLogged = 0
    }

    private let log: EngineLog?
    private let now: @Sendable () -> UInt64
    /// The run under way (nil: the store works); `failing` mirrors it, so that a success costs one atomic load.
    private let run = Mutex<Run?>(nil)
    private let failing = Atomic<Bool>(false)
    /// Failed operations since start (`counts`).
    private let failures = Atomic<Int>(0)

    /// Failed operations since start, and whether a run of failures is under way (`rpc.stats` `storeFailures`).
    var counts: (operations: Int, failing: Bool) { (failures.load(ordering: .relaxed), failing.load(ordering: .relaxed)) }

    /// - Parameter now: the monotonic clock in nanoseconds (`TimerQueue.now`; tests give their own).
    init(log: EngineLog?, now: @escaping @Sendable () -> UInt64 = { TimerQueue.now() }) {
        self.log = log
        self.now = now
    }

    /// An operation failed with `error` (`context`: what it was, when the error does not say).
    func failed(_ error: any Error, _ context: String? = nil) {
        failures.add(1, ordering: .relaxed)
        let time = now()
        // Under the lock only the decision: whether to log, and how many failures went unlogged (nil: do not log).
        let unlogged = run.withLock { run -> Int? in
            guard var current = run else {
                run = Run(start: time, lastLine: time)
                failing.store(true, ordering: .relaxed)
                return 0
            }
            current.failures += 1
            defer { run = current }
            guard time &- current.lastLine >= StoreExecutor.nanoseconds(Self.interval) else {
                current.notLogged += 1
                return nil
            }
            defer {
                current.lastLine = time
                current.notLogged = 0
            }
            return current.notLogged
        }
        guard let unlogged, let log else { return }
        let reason = "store failure" + (context.map { " " + $0 } ?? "") + ": \(error)"
        log(.warning, unlogged == 0 ? reason : reason + " (\(unlogged) more failed operations since the last line)")
    }

    /// Writes given up after their tries (`TokenStore`'s cache writes): a warning of their own, outside any run,
    /// since the store may be answering everything else meanwhile (at most one per `CacheQueue` retry cycle).
    func dropped(_ error: any Error, _ context: String) {
        log?(.warning, "store failure \(context): \(error)")
    }

    /// An operation succeeded: ends the run of failures, if one is under way.
    func succeeded() {
        guard failing.load(ordering: .relaxed) else { return }
        let time = now()
        let ended = run.withLock { run in
            defer { run = nil }
            failing.store(false, ordering: .relaxed)
            return run
        }
        guard let ended else { return }
        let seconds = Double((time &- ended.start) / 1_000_000) / 1000
        let failures = "\(ended.failures) failed operation\(ended.failures == 1 ? "" : "s")"
        log?(.info, "store working again after \(seconds) s (\(failures) in all)")
    }
}
