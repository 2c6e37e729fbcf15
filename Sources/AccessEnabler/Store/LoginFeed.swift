import Synchronization

/// What changed who is logged in, as the store learns it: one login (scope, device, requestor), every login of a
/// requestor, or every login (`passbridge state reset`, a resynchronisation whose cause is unknown).
public enum LoginChange: Sendable, Hashable {
    case login(LoginKey)
    case requestor(String)
    case everything

    func covers(_ key: LoginKey) -> Bool {
        switch self {
        case .login(let login): login == key
        case .requestor(let requestor): key.requestor == requestor
        case .everything: true
        }
    }
}

/// What a store database learned of writes made by others (another process on the same SQLite file, another
/// daemon of the fleet) since it was last asked (`StoreDatabase.externalChanges()`).
enum ExternalChanges: Sendable, Equatable {
    case none
    /// These logins changed (PostgreSQL's notifications).
    case some(Set<LoginChange>)
    /// Something changed, and what is not known (SQLite's `data_version` moved; PostgreSQL reconnected, so that
    /// notifications may have been missed): every watched login is read again.
    case unknown
}

/// A subscription to the changes of some logins (`TokenStore.watch`); cancelled by `cancel()` or when freed.
public final class LoginWatch: Sendable {
    let id: Int
    private weak let feed: LoginFeed?

    init(id: Int, feed: LoginFeed) {
        self.id = id
        self.feed = feed
    }

    /// Stops the deliveries (a delivery already under way may still arrive).
    public func cancel() { feed?.remove(id) }

    deinit { feed?.remove(id) }
}

/// The live logins of one `TokenStore`: the profiles of every watched login, kept in memory and true, and the
/// watchers to tell when one changes. Reads of a watched login come from memory (no store call); the store's
/// worker updates the memory after each profile write of this process, and reads a watched login again when it
/// learns that another process changed it (`refresh`). Only watched logins are kept, so memory follows the live
/// instances, not the store's size. Every change of the memory happens on the store's worker thread, in the order
/// of its jobs, so a read that started before a write cannot put back what the write replaced.
final class LoginFeed: Sendable {
    private struct Watcher {
        let logins: Set<LoginKey>
        let deliver: @Sendable (Set<LoginKey>) -> Void
    }

    private struct State {
        var watchers: [Int: Watcher] = [:]
        var nextID = 0
        /// The profiles of watched logins, by MVPD, as stored; a login absent here is read from the store.
        var profiles: [LoginKey: [String: StoredProfile]] = [:]
        /// The authorization expiries this process wrote for watched logins in memory, as stored (`storedExpiry`);
        /// forgotten with the login's profiles, and whenever they change (a logout deletes its expiries).
        var expiries: [LoginKey: [ExpiryKey: Int64]] = [:]
        /// Reads served from memory, and reads that waited on the store (`rpc.stats`).
        var memoryReads = 0
        var storeReads = 0
        /// A look for other processes' changes is owed at once: a watch started (PostgreSQL then starts listening)
        /// or the last one ended (PostgreSQL then stops).
        var lookOwed = false
        /// Wakes the store's worker for a look owed (`TokenStore`).
        var wake: (@Sendable () -> Void)?
        /// What a look learned had changed but could not read (the read failed): read by the next look, since the
        /// database will not tell it again.
        var unread: Set<LoginChange> = []
    }

    private let state = Mutex(State())

    /// Whether any login is watched.
    var isWatching: Bool { state.withLock { !$0.watchers.isEmpty } }

    /// Whether the store's worker should look for other processes' changes: while a login is watched, and once
    /// more after the last watch ended.
    var wantsLook: Bool { state.withLock { !$0.watchers.isEmpty || $0.lookOwed } }

    /// Whether a look is owed at once (a watch started, or the last one ended).
    var lookOwed: Bool { state.withLock { $0.lookOwed } }

    /// Whether a look failed to read what it learned had changed (`unread`): the next look reads it.
    var hasUnread: Bool { state.withLock { !$0.unread.isEmpty } }

    /// The worker is about to look: returns whether anything is watched, and pays the look owed.
    func looking() -> Bool {
        state.withLock { state in
            state.lookOwed = false
            return !state.watchers.isEmpty
        }
    }

    func add(_ logins: Set<LoginKey>, _ deliver: @escaping @Sendable (Set<LoginKey>) -> Void) -> LoginWatch {
        let id = state.withLock { state in
            state.nextID += 1
            state.watchers[state.nextID] = Watcher(logins: logins, deliver: deliver)
            state.lookOwed = true
            return state.nextID
        }
        return LoginWatch(id: id, feed: self)
    }

    func remove(_ id: Int) {
        let wake = state.withLock { state -> (@Sendable () -> Void)? in
            guard state.watchers.removeValue(forKey: id) != nil else { return nil }
            let watched = Set(state.watchers.values.flatMap(\.logins))
            state.profiles = state.profiles.filter { watched.contains($0.key) }
            state.expiries = state.expiries.filter { watched.contains($0.key) }
            guard state.watchers.isEmpty else { return nil }
            state.lookOwed = true
            return state.wake
        }
        wake?()
    }

    /// Sets what wakes the store's worker when the last watch ends (a look is then owed).
    func setWake(_ wake: @escaping @Sendable () -> Void) { state.withLock { $0.wake = wake } }

    /// The authorization expiry stored under `key` as this process last wrote it, when its login is watched and in
    /// memory and has not changed since; else nil (unknown).
    func storedExpiry(_ key: ExpiryKey) -> Int64? {
        state.withLock { $0.expiries[key.profile.login]?[key] }
    }

    /// Worker thread: these expiries were just written; those of watched logins in memory are remembered.
    func wroteExpiries(_ written: [ExpiryKey: Int64]) {
        state.withLock { state in
            for (key, notAfter) in written where state.profiles[key.profile.login] != nil {
                state.expiries[key.profile.login, default: [:]][key] = notAfter
            }
        }
    }

    /// The profiles of `logins` when every one is in memory (counted as a memory read), else nil.
    func cached(_ logins: Set<LoginKey>) -> [LoginKey: [String: StoredProfile]]? {
        state.withLock { state in
            var found: [LoginKey: [String: StoredProfile]] = [:]
            for login in logins {
                guard let profiles = state.profiles[login] else { return nil }
                found[login] = profiles
            }
            state.memoryReads += 1
            return found
        }
    }

    /// Worker thread: `logins` were just read from the store; the watched ones are kept, and a watched login that
    /// memory held otherwise (changed elsewhere, not yet seen by a look) is told to its watchers.
    func read(_ profiles: [LoginKey: [String: StoredProfile]]) {
        let deliveries = state.withLock { state -> [(Watcher, Set<LoginKey>)] in
            state.storeReads += 1
            let watched = Set(state.watchers.values.flatMap(\.logins))
            var changed: Set<LoginChange> = []
            for (login, stored) in profiles where watched.contains(login) {
                if let known = state.profiles[login], known != stored {
                    changed.insert(.login(login))
                    state.expiries[login] = nil
                }
                state.profiles[login] = stored
            }
            return changed.isEmpty ? [] : Self.affected(state, changed)
        }
        for (watcher, logins) in deliveries { watcher.deliver(logins) }
    }

    /// Worker thread: this process wrote `profile` (nil: deleted) under `key`: memory follows, and the login's
    /// watchers are told, but the writer's own watch (`writer`, a `LoginWatch.id`): an owner does not hear its own
    /// writes as news.
    func wrote(_ profile: StoredProfile?, _ key: ProfileKey, by writer: Int? = nil) {
        let deliveries = state.withLock { state -> [(Watcher, Set<LoginKey>)] in
            if state.profiles[key.login] != nil { state.profiles[key.login]?[key.mvpd] = profile }
            state.expiries[key.login] = nil
            return Self.affected(state, [.login(key.login)], except: writer)
        }
        for (watcher, logins) in deliveries { watcher.deliver(logins) }
    }

    /// Worker thread: one look. Asks `changes` what other processes changed and reads those logins again
    /// (`refresh`). The reads' answers may bring more changes along (PostgreSQL's client library then holds the
    /// notifications, which the socket, already read, no longer shows): the worker looks again before it sleeps
    /// while the database says so (`StoreDatabase.changesWaiting`). Throws what `changes` or a read threw; what a
    /// failed read was to read is kept for the next look (`unread`).
    func look(changes: () throws -> ExternalChanges, read: (LoginKey) throws -> [String: StoredProfile]) throws {
        let found = try changes()
        var covered = state.withLock { state in
            defer { state.unread = [] }
            return state.unread
        }
        switch found {
        case .none: break
        case .some(let changed): covered.formUnion(changed)
        case .unknown: covered = [.everything]
        }
        guard !covered.isEmpty else { return }
        do {
            try refresh(covered, read: read)
        } catch {
            // A read that failed (a lock held past the statement timeout, the connection cut): what it was to read
            // is read by the next look.
            state.withLock { $0.unread.formUnion(covered) }
            throw error
        }
    }

    /// Worker thread: what `changes` cover may be different in the store now: read each watched login among them
    /// again with `read`, keep it, and tell the watchers of those that differ from memory (all of them when memory
    /// had none). Returns how many logins were read.
    @discardableResult
    func refresh(_ changes: Set<LoginChange>, read: (LoginKey) throws -> [String: StoredProfile]) rethrows -> Int {
        let watched = state.withLock { state in Set(state.watchers.values.flatMap(\.logins)) }
        let stale = watched.filter { login in changes.contains { $0.covers(login) } }
        var changed = Set<LoginKey>()
        for login in stale {
            let stored = try read(login)
            state.withLock { state in
                state.storeReads += 1
                if state.profiles[login] != stored {
                    changed.insert(login)
                    state.expiries[login] = nil
                }
                state.profiles[login] = stored
            }
        }
        guard !changed.isEmpty else { return stale.count }
        let deliveries = state.withLock { state in Self.affected(state, Set(changed.map { .login($0) })) }
        for (watcher, logins) in deliveries { watcher.deliver(logins) }
        return stale.count
    }

    /// Worker thread: this process changed logins without knowing which profiles (`reset`): memory forgets them
    /// and their watchers are told.
    func forget(_ change: LoginChange) {
        let deliveries = state.withLock { state -> [(Watcher, Set<LoginKey>)] in
            state.profiles = state.profiles.filter { !change.covers($0.key) }
            state.expiries = state.expiries.filter { !change.covers($0.key) }
            return Self.affected(state, [change])
        }
        for (watcher, logins) in deliveries { watcher.deliver(logins) }
    }

    /// (memory reads, store reads) since start.
    var readCounts: (memory: Int, store: Int) { state.withLock { ($0.memoryReads, $0.storeReads) } }

    private static func affected(_ state: State, _ changes: Set<LoginChange>, except writer: Int? = nil) -> [(Watcher, Set<LoginKey>)] {
        state.watchers.compactMap { id, watcher in
            guard id != writer else { return nil }
            let hit = watcher.logins.filter { login in changes.contains { $0.covers(login) } }
            return hit.isEmpty ? nil : (watcher, hit)
        }
    }
}
