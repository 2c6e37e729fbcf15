import Glibc

/// A serial executor whose thread also runs work at a given time: the engine's timers (a second screen's polls,
/// a logout page's timeout) then run as work of the executor the engine runs on, woken by that executor's own
/// wait (the event loop's epoll timeout, a worker's timed condition wait) with no other thread involved.
/// `EventLoop` (JSONRPC) and `ThreadExecutor` (AccessEnabler) are such executors.
///
/// It is also the task executor of the tasks that work for its engine without being isolated to it (setRequestor's
/// child per service provider, a partner SSO host call), so that no engine work runs on Swift's global pool.
public protocol TimerExecutor: SerialExecutor, TaskExecutor {
    /// Runs `body` on this executor's thread once `delay` (monotonic clock) has passed, between its jobs.
    /// Callable from any thread; timers due at the same time run in the order they were added. The handle stops
    /// the timer: its owner keeps it and cancels it when the state that armed it moves on.
    @discardableResult
    func run(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> Scheduled
}

extension TimerExecutor {
    /// Debug builds: stops the process unless the caller runs on this executor's thread, where the work of its
    /// engine belongs (the check that no engine work runs on Swift's global pool; the end-to-end tests run debug
    /// builds).
    @inline(__always)
    public func checkOwnThread() {
        #if DEBUG
            checkIsolated()
        #endif
    }
}

/// A timer of a `TimerExecutor`, as swift-nio's `Scheduled`: `cancel()` stops it if it has not run yet.
public struct Scheduled: Sendable {
    private let stop: @Sendable () -> Void

    public init(cancel: @escaping @Sendable () -> Void) { stop = cancel }

    /// Stops the timer: if it has not run, it never will (call it on the executor's thread to be sure it has not
    /// started); after it ran, nothing happens.
    public func cancel() { stop() }
}

/// The timers of one executor thread, earliest deadline first (monotonic nanoseconds, `TimerQueue.now()`). A
/// value: its owner keeps it under its own lock.
public struct TimerQueue: Sendable {
    private var entries: [(deadline: UInt64, id: UInt64, body: @Sendable () -> Void)] = []
    private var lastID: UInt64 = 0

    public init() {}

    /// The monotonic clock, in nanoseconds.
    public static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// The deadline `delay` from now (negative delays are now).
    public static func deadline(after delay: Duration) -> UInt64 {
        let (seconds, attoseconds) = delay.components
        guard seconds >= 0, attoseconds >= 0 else { return now() }
        return now() &+ UInt64(seconds) &* 1_000_000_000 &+ UInt64(attoseconds / 1_000_000_000)
    }

    public var isEmpty: Bool { entries.isEmpty }

    /// The earliest deadline, nil when there is no timer.
    public var nextDeadline: UInt64? { entries.first?.deadline }

    /// Adds `body` at `deadline`, after the timers already due by then; returns its id, for `cancel`.
    public mutating func add(at deadline: UInt64, _ body: @escaping @Sendable () -> Void) -> UInt64 {
        lastID += 1
        let index = entries.firstIndex { $0.deadline > deadline } ?? entries.count
        entries.insert((deadline, lastID, body), at: index)
        return lastID
    }

    /// Removes timer `id` if it has not been taken yet.
    public mutating func cancel(_ id: UInt64) {
        if let index = entries.firstIndex(where: { $0.id == id }) { entries.remove(at: index) }
    }

    /// Removes and returns the timers due at `now`, in order.
    public mutating func takeDue(now: UInt64) -> [@Sendable () -> Void] {
        let due = entries.prefix { $0.deadline <= now }.map(\.body)
        entries.removeFirst(due.count)
        return due
    }

    /// Milliseconds until the next deadline, rounded up (epoll's timeout); nil when there is no timer.
    public func millisecondsToNext(now: UInt64) -> Int32? {
        guard let next = nextDeadline else { return nil }
        guard next > now else { return 0 }
        return Int32(clamping: (next - now + 999_999) / 1_000_000)
    }
}

/// Suspends the calling task for `delay`, as a timer of `executor`. Unlike `Task.sleep` in the caller's task it is not cut short when that task is cancelled, so a
/// pause that spaces requests to a backend (a `Retry-After`, a retry's delay) keeps its length even for a call
/// the host has given up on (`$/cancelRequest`, Protocol/README.md).
public func uncancelledSleep(for delay: Duration, on executor: any TimerExecutor) async {
    await withCheckedContinuation { continuation in executor.run(after: delay) { continuation.resume() } }
}
