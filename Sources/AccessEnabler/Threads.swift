import Glibc
import Synchronization
import ThreadAffinity

/// Starts a detached thread named `name` (Linux keeps the first 15 bytes) that runs `body`.
func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
    final class Box: @unchecked Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(_ name: String, _ body: @escaping @Sendable () -> Void) { self.name = name; self.body = body }
    }
    var thread = pthread_t()
    let context = Unmanaged.passRetained(Box(name, body)).toOpaque()
    let started = pthread_create(
        &thread, nil,
        { context in
            let box = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
            nameThisThread(box.name)
            box.body()
            return nil
        }, context)
    precondition(started == 0, "pthread_create failed: \(started)")
    pthread_detach(thread)
}

/// A mutex with a condition variable (POSIX threads), for threads that sleep until there is work.
final class ThreadCondition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        // Timed waits measure the monotonic clock (`TimerQueue.now()`), which a change of the wall clock leaves alone.
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
    /// Releases the lock, sleeps until signalled, and takes the lock again (the caller re-checks its predicate).
    func wait() { pthread_cond_wait(condition, mutex) }
    /// As `wait()`, but wakes by itself at `deadline` (monotonic nanoseconds) at the latest.
    func wait(until deadline: UInt64) {
        var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        pthread_cond_timedwait(condition, mutex, &time)
    }
    func signal() { pthread_cond_signal(condition) }
    func broadcast() { pthread_cond_broadcast(condition) }
}

/// Names the calling thread as `ps -L` and `top -H` show it (Glibc's module lacks pthread_setname_np).
private func nameThisThread(_ name: String) {
    let fd = open("/proc/thread-self/comm", O_WRONLY)
    guard fd >= 0 else { return }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}

/// A serial executor on a thread of its own, for engines that are given none (a library user, the tests): jobs run
/// one at a time, in the order they were enqueued, and timers (`run(after:_:)`) on the same thread. The daemon
/// gives each engine its connection's event loop instead (`AccessEnablerConfiguration.executor`).
final class ThreadExecutor: TimerExecutor, @unchecked Sendable {
    /// One thread for every engine of the process that has no executor of its own; started by its first job.
    static let shared = ThreadExecutor(name: "passbridge-engine")

    private let name: String
    private let queue = Mutex<(jobs: [UnownedJob], timers: TimerQueue, started: Bool)>(([], TimerQueue(), false))
    private let condition = ThreadCondition()
    private let thread = ThreadAffinity()

    init(name: String) { self.name = name }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        wakeWorker { $0.jobs.append(job) }
    }

    @discardableResult
    func run(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> Scheduled {
        let deadline = TimerQueue.deadline(after: delay)
        var added: UInt64 = 0
        wakeWorker { added = $0.timers.add(at: deadline, body) }
        let id = added
        return Scheduled { [weak self] in self?.queue.withLock { $0.timers.cancel(id) } }
    }

    /// Changes the queue and wakes the worker (starting it the first time).
    private func wakeWorker(_ change: (inout (jobs: [UnownedJob], timers: TimerQueue, started: Bool)) -> Void) {
        condition.lock()
        let start = queue.withLock { queue in
            change(&queue)
            defer { queue.started = true }
            return !queue.started
        }
        condition.signal()
        condition.unlock()
        if start { startThread(name: name) { [self] in work() } }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }

    func asUnownedTaskExecutor() -> UnownedTaskExecutor { UnownedTaskExecutor(ordinary: self) }

    func checkIsolated() {
        precondition(thread.isOwner, "not on the thread of \(name)")
    }

    private func work() {
        thread.claim()
        while true {
            condition.lock()
            var batch: [UnownedJob] = []
            var due: [@Sendable () -> Void] = []
            while batch.isEmpty && due.isEmpty {
                let next = queue.withLock { queue in
                    swap(&batch, &queue.jobs)
                    due = queue.timers.takeDue(now: TimerQueue.now())
                    return queue.timers.nextDeadline
                }
                guard batch.isEmpty && due.isEmpty else { break }
                if let next { condition.wait(until: next) } else { condition.wait() }
            }
            condition.unlock()
            for job in batch { job.runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor()) }
            for body in due { body() }
        }
    }
}
