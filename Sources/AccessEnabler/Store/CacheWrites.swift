import Synchronization
import ThreadAffinity

/// The cache writes one caller queues (`TokenStore.submit`): recorded on the caller's own thread, then handed to
/// the store's ``CacheQueue``. Cache writes may be lost in a crash; they are made together, without an fsync.
struct CacheWrites: Sendable {
    /// An authorization expiry (epoch ms) of one resource of one profile.
    struct Expiry: Sendable {
        var key: ProfileKey
        var resource: String
        var notAfter: Int64
    }

    private(set) var expiries: [Expiry] = []
    private(set) var selections: [(LoginKey, String?)] = []

    /// Records the authorization expiry of `resource` (a cache of the decision's `notAfter`). Never throws: the
    /// write itself is made later (`TokenStore.submit`); callers use `try` as for a database's writes.
    mutating func setAuthorizationExpiry(_ notAfter: Int64, _ key: ProfileKey, resource: String) throws {
        expiries.append(Expiry(key: key, resource: resource, notAfter: notAfter))
    }

    /// Records the MVPD last logged in with (nil: none). Never throws, as `setAuthorizationExpiry`.
    mutating func setSelectedProvider(_ mvpd: String?, _ key: LoginKey) throws {
        selections.append((key, mvpd))
    }
}

/// Where an authorization expiry is stored: a profile key and a resource.
struct ExpiryKey: Sendable, Hashable {
    var profile: ProfileKey
    var resource: String
}

/// The cache writes waiting for the store's worker: each row's latest value (a newer value of the same row
/// replaces the one waiting, so a row is written once however often it changed meanwhile), the failure handlers
/// of the calls that queued them, and when they must be written. An authorization expiry equal to what is waiting
/// for its row, or to what the store holds as far as this process knows (`LoginFeed.storedExpiry`), is not queued
/// at all: it is counted as unchanged. Writes that failed wait again (`putBack`), so that a database restarting
/// or failing over loses none; they are given up, and their failure told, after `attemptsAllowed` tries.
struct CacheQueue: Sendable {
    static let attemptsAllowed = 8
    var expiries: [ExpiryKey: Int64] = [:]
    var selections: [LoginKey: String?] = [:]
    var failed: [@Sendable (any Error) -> Void] = []
    /// When the waiting writes must be made (monotonic ns), set by the first of them.
    var due: UInt64?
    /// How many times the writes waiting have failed in a row.
    var failures = 0
    /// Authorization expiry rows written to the store, and expiries not written because the store held them.
    var written = 0
    var unchanged = 0

    var isEmpty: Bool { expiries.isEmpty && selections.isEmpty }

    /// Takes `writes`, to be written within `delay`; returns whether that made the writes due sooner (the worker
    /// must then be told).
    mutating func add(
        _ writes: CacheWrites, failed handler: @escaping @Sendable (any Error) -> Void, delay: Duration,
        stored: (ExpiryKey) -> Int64?
    ) -> Bool {
        for expiry in writes.expiries {
            let key = ExpiryKey(profile: expiry.key, resource: expiry.resource)
            if (expiries[key] ?? stored(key)) == expiry.notAfter {
                unchanged += 1
                continue
            }
            expiries[key] = expiry.notAfter
        }
        for (key, mvpd) in writes.selections { selections[key] = .some(mvpd) }
        guard !isEmpty else { return false }
        // A failed write is told by a few of the calls that queued it, not by every one (each logs a line).
        if failed.count < 4 { failed.append(handler) }
        let proposed = TimerQueue.now() &+ StoreExecutor.nanoseconds(delay)
        guard due.map({ proposed < $0 }) ?? true else { return false }
        due = proposed
        return true
    }

    /// Writes that failed (`take`n), to be tried again after `delay`: a row queued again meanwhile keeps its newer
    /// value. Returns the failure handlers to call when they are given up (`attemptsAllowed`), else nil.
    mutating func putBack(_ failed: CacheQueue, delay: Duration) -> [@Sendable (any Error) -> Void]? {
        failures = failed.failures + 1
        guard failures < Self.attemptsAllowed else {
            failures = 0
            return failed.failed
        }
        expiries.merge(failed.expiries) { newer, _ in newer }
        selections.merge(failed.selections) { newer, _ in newer }
        self.failed = Array((failed.failed + self.failed).prefix(4))
        due = TimerQueue.now() &+ StoreExecutor.nanoseconds(delay)
        return nil
    }

    /// Everything waiting, leaving the queue empty (the counts stay).
    mutating func take() -> CacheQueue {
        defer {
            expiries = [:]
            selections = [:]
            failed = []
            due = nil
            failures = 0
        }
        return self
    }
}

/// The store's ``CacheQueue`` under its lock, shared by the callers (`TokenStore.submit`) and the worker.
final class PendingCache: Sendable {
    private let queue = Mutex(CacheQueue())

    func withLock<T>(_ body: (inout CacheQueue) -> T) -> T { queue.withLock { body(&$0) } }
}
