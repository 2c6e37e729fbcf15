import FoundationEssentials
import Synchronization

/// Dedicated threads that run the store's I/O, so that neither the daemon's event loop nor Swift's cooperative
/// pool ever waits on a disk, a lock or a database server. Each worker owns one database; with one worker,
/// jobs run in the order they were submitted.
final class StoreExecutor: Sendable {
    typealias Job = @Sendable (any StoreDatabase) -> Void

    private let jobs = Mutex<(queue: [Job], closed: Bool)>(([], false))
    private let condition = ThreadCondition()

    /// Starts one worker thread per database.
    init(name: String, databases: [any StoreDatabase]) {
        for (index, database) in databases.enumerated() {
            let box = UncheckedDatabase(database)
            startThread(name: databases.count == 1 ? name : "\(name)-\(index)") { [self] in self.work(box.database) }
        }
    }

    /// Runs `job` on a worker with its database and returns its result (or rethrows its error). The caller
    /// resumes on its own actor, in the order the jobs ended, so calls of one actor keep their order.
    func run<T: Sendable>(
        isolation: isolated (any Actor)? = #isolation, _ job: @escaping @Sendable (any StoreDatabase) throws -> T
    ) async throws -> T {
        try await withCheckedThrowingContinuation(isolation: isolation) { (continuation: CheckedContinuation<T, any Error>) in
            submit { database in continuation.resume(with: Result { try job(database) }) }
        }
    }

    /// Queues `job` without waiting for it.
    func submit(_ job: @escaping Job) {
        condition.lock()
        jobs.withLock { $0.queue.append(job) }
        condition.signal()
        condition.unlock()
    }

    /// Lets the workers finish what is queued, then end (closing their databases).
    func close() {
        condition.lock()
        jobs.withLock { $0.closed = true }
        condition.broadcast()
        condition.unlock()
    }

    private func work(_ database: any StoreDatabase) {
        database.thread.claim()
        while true {
            condition.lock()
            var job: Job?
            var closed = false
            while job == nil, !closed {
                (job, closed) = jobs.withLock { jobs in jobs.queue.isEmpty ? (nil, jobs.closed) : (jobs.queue.removeFirst(), false) }
                if job == nil, !closed { condition.wait() }
            }
            condition.unlock()
            guard let job else { return }
            job(database)
        }
    }
}

/// Hands a database to the one worker thread that will ever use it.
private struct UncheckedDatabase: @unchecked Sendable {
    let database: any StoreDatabase
    init(_ database: any StoreDatabase) { self.database = database }
}
