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

    /// Records the authorization expiry of `resource` (a cache of the decision's `notAfter`); the write itself is
    /// made later (`TokenStore.submit`).
    mutating func setAuthorizationExpiry(_ notAfter: Int64, _ key: ProfileKey, resource: String) {
        expiries.append(Expiry(key: key, resource: resource, notAfter: notAfter))
    }

    /// Records the MVPD last logged in with (nil: none).
    mutating func setSelectedProvider(_ mvpd: String?, _ key: LoginKey) {
        selections.append((key, mvpd))
    }
}

/// Where an authorization expiry is stored: a profile key and a resource.
struct ExpiryKey: Sendable, Hashable {
    var profile: ProfileKey
    var resource: String
}

/// The cache writes waiting for the store's worker: each row's latest value (a newer value of the same row
/// replaces the one waiting, so a row is written once however often it changed meanwhile), and when they must be
/// written. An authorization expiry equal to what is waiting for its row, or to what the store holds as far as
/// this process knows (`LoginFeed.storedExpiry`), is not queued at all: it is counted as unchanged. Writes that
/// failed wait again (`putBack`), each time twice as long (0.25 s, 0.5 s, … 16 s: about 30 s in all), so that a
/// database restarting or failing over loses none; they are given up after `attemptsAllowed` tries, and only then
/// is their failure logged (`TokenStore`).
struct CacheQueue: Sendable {
    static let attemptsAllowed = 8
    var expiries: [ExpiryKey: Int64] = [:]
    var selections: [LoginKey: String?] = [:]
    /// When the waiting writes must be made (monotonic ns), set by the first of them.
    var due: UInt64?
    /// How many times the writes waiting have failed in a row.
    var failures = 0
    /// Authorization expiry rows written to the store, and expiries not written because the store held them.
    var written = 0
    var unchanged = 0

    var isEmpty: Bool { expiries.isEmpty && selections.isEmpty }

    /// Whether the writes waiting are made before the next job (`StoreExecutor.Deferred.beforeJobs`): yes, unless
    /// they failed and wait for their next try.
    var beforeJobs: Bool { due != nil && failures == 0 }

    /// Takes `writes`, to be written within `delay`; returns whether that made the writes due sooner (the worker
    /// must then be told).
    mutating func add(_ writes: CacheWrites, delay: Duration, stored: (ExpiryKey) -> Int64?) -> Bool {
        for expiry in writes.expiries {
            let key = ExpiryKey(profile: expiry.key, resource: expiry.resource)
            if (expiries[key] ?? stored(key)) == expiry.notAfter {
                unchanged += 1
                continue
            }
            expiries[key] = expiry.notAfter
        }
        for (key, mvpd) in writes.selections { selections[key] = .some(mvpd) }
        // Writes that failed keep the time of their next try: new ones wait with them.
        guard !isEmpty, failures == 0 else { return false }
        let proposed = TimerQueue.now() &+ StoreExecutor.nanoseconds(delay)
        guard due.map({ proposed < $0 }) ?? true else { return false }
        due = proposed
        return true
    }

    /// Writes that failed (`take`n), to be tried again after `delay` doubled for each failure before this one,
    /// unless they have failed `attemptsAllowed` times: then they are dropped, and true is returned. A row queued
    /// again meanwhile keeps its newer value.
    mutating func putBack(_ failed: CacheQueue, delay: Duration) -> Bool {
        failures = failed.failures + 1
        guard failures < Self.attemptsAllowed else {
            failures = 0
            return true
        }
        expiries.merge(failed.expiries) { newer, _ in newer }
        selections.merge(failed.selections) { newer, _ in newer }
        due = TimerQueue.now() &+ StoreExecutor.nanoseconds(delay * (1 << (failures - 1)))
        return false
    }

    /// Everything waiting, leaving the queue empty (the counts stay).
    mutating func take() -> CacheQueue {
        defer {
            expiries = [:]
            selections = [:]
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
