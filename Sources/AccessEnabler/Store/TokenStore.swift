import CSQLite
import Glibc
import JSON
import Synchronization

/// The persistent state every AccessEnabler instance shares: DCR client credentials and access tokens per
/// (backend URL, software statement), the device identifier, profiles and the selected MVPD per (scope, device,
/// requestor[, MVPD]), and authorization expiries (a cache). Preauthorization decisions are never stored.
///
/// Embedded: SQLite in a state directory (`init(directory:)`). Fleet: PostgreSQL (`init(postgreSQL:)`). Every call
/// runs on the store's own threads and is `async`; every failure is thrown as `TokenStoreError`. A durable
/// write (login, logout, credentials) is on disk when its call returns. Values never reach a log.
public final class TokenStore: Sendable {
    let executor: StoreExecutor
    /// The watched logins' profiles in memory, and their watchers (`watch`).
    let feed = LoginFeed()
    /// Cache writes waiting for the worker (`submit`).
    private let cache = PendingCache()
    /// The token-refresh leases this process holds (scope → until, epoch ms): taken by `claimTokenRefresh`, ended
    /// by `releaseTokenRefresh` or the token's save, and given back by `close` when a refresh is still under way
    /// (a daemon stopped meanwhile would otherwise leave the fleet's other processes waiting it out).
    private let leases = Mutex<[StoreScope: Int64]>([:])
    /// How often the store's worker looks for other processes' login changes while logins are watched, when it
    /// has no socket to wait on for them: SQLite's announcements (`LoginAnnouncement`) and PostgreSQL's
    /// notifications arrive on one, and this interval is used only without an inotify watch or while the
    /// connection is failing.
    public static let defaultLookInterval = Duration.milliseconds(200)
    /// How long a store operation waits for another session's or process's lock before it fails: SQLite's busy
    /// timeout (`init(directory:busyTimeout:)`), PostgreSQL's `statement_timeout`.
    public static let defaultBusyTimeout = Duration.seconds(5)
    /// How long cache writes wait for more before they are written together (`submit`).
    public static let cacheWriteDelay = Duration.milliseconds(250)
    /// Where the store lives, for messages: the database file, or the PostgreSQL URL without its password.
    public let location: String

    /// The store in `passbridge.sqlite` in `directory`: checked now, opened (created when needed, an older schema
    /// upgraded in place) on the store's thread by the first call that needs it.
    ///
    /// A missing directory is created 0700 now; an existing one is used as it is when it belongs to the effective
    /// user and others cannot write to it, else refused. The database file is created 0600; the files of an
    /// existing one (with its `-wal`, `-shm`, `-journal`) are made 0600 now, or refused when they are not regular
    /// files of the effective user (`StoreFileRule`), and checked again after the open. Opening the database is
    /// left to the first call so that a daemon maps none of SQLite's pages before it needs them: a database that
    /// cannot be opened (corrupt, written by a newer PassBridge) fails that call, and the next call tries again.
    /// - Parameters:
    ///   - busyTimeout: how long a call waits for another process's write lock before failing.
    ///   - lookInterval: how often other processes' login changes are looked for (`defaultLookInterval`).
    ///   - log: receives, at `.warning`, one line per store file made 0600, and the store's failures
    ///     (`StoreFailureLog`) unless `logsFailures` is false (a caller that reports each failure itself).
    /// - Throws: `TokenStoreError` for the directory or a store file.
    public init(
        directory: String, busyTimeout: Duration = defaultBusyTimeout, lookInterval: Duration = defaultLookInterval,
        log: EngineLog? = nil, logsFailures: Bool = true
    ) throws {
        try StateDirectoryRule.prepare(directory)
        let path = directory.trimmingSuffix("/") + "/passbridge.sqlite"
        let millis = Int32(busyTimeout.components.seconds * 1000 + busyTimeout.components.attoseconds / 1_000_000_000_000_000)
        for line in try StoreFileRule.prepare(path) { log?(.warning, line) }
        location = path
        executor = StoreExecutor(name: "passbridge-store", log: logsFailures ? log : nil) {
            let database = try SQLiteStore(path: path, busyTimeoutMillis: millis)
            try StoreFileRule.verify(path)
            return database
        }
        startWorking(lookInterval: lookInterval)
    }

    /// Connects to the fleet's PostgreSQL database (a libpq URI, `postgresql://user@host/db` or
    /// `postgresql:///db?host=/socket/dir`) and brings its schema up to date, now: a fleet daemon with a wrong URL
    /// or an unreachable server fails at start. A connection the server closed later is reopened by the next
    /// call, which then runs again when that is safe (`PostgreSQLStore`); `log` receives each reconnect, and the
    /// store's failures (`StoreFailureLog`) unless `logsFailures` is false, at `.warning`. `lookInterval`: how often the look is made while the connection fails (`defaultLookInterval`;
    /// the tests set it to an hour to show that notifications come on the socket).
    /// - Throws: `TokenStoreError.postgreSQL` when it cannot connect or migrate.
    public init(
        postgreSQL url: String, log: EngineLog? = nil, logsFailures: Bool = true, lookInterval: Duration = defaultLookInterval
    ) throws {
        let database = OpenedDatabase(try PostgreSQLStore(url: url, log: log))
        location = PostgreSQLURL.redacted(url)
        executor = StoreExecutor(name: "passbridge-store", log: logsFailures ? log : nil) { database.database }
        startWorking(lookInterval: lookInterval)
    }

    /// The worker's work between jobs: the look for other processes' login changes while logins are watched (what
    /// they changed is read again into memory and told to the watchers, `LoginFeed.refresh`), and the cache writes.
    private func startWorking(lookInterval: Duration) {
        let feed = self.feed
        feed.setWake { [weak executor] in executor?.wake() }
        executor.setLook(
            StoreExecutor.Look(
                interval: lookInterval, wanted: { feed.wantsLook }, owed: { feed.lookOwed }, unread: { feed.hasUnread },
                run: { database in
                    let watching = feed.looking()
                    // A failure (the database is away) is tried again at the next look; `.unknown` then makes
                    // up for what was missed.
                    try feed.look(changes: { try database.externalChanges(watching: watching) }, read: database.profiles)
                }))
        let (cache, failures) = (self.cache, executor.failures)
        executor.setDeferred(
            StoreExecutor.Deferred(
                due: { cache.withLock { $0.due } },
                beforeJobs: { cache.withLock { $0.beforeJobs } },
                run: { database, last in
                    let waiting = cache.withLock { $0.take() }
                    guard !waiting.isEmpty else { return }
                    do {
                        let leftOut = try database.writeCache(expiries: waiting.expiries, selections: waiting.selections)
                        let written = leftOut.isEmpty ? waiting.expiries : waiting.expiries.filter { !leftOut.contains($0.key) }
                        feed.wroteExpiries(written)
                        cache.withLock { $0.written += written.count }
                        failures.succeeded()
                    } catch {
                        // A write that failed waits for the next ones: a restart of the server costs it nothing.
                        // One given up is logged on its own line, outside any run of failures: the store may be
                        // answering everything else meanwhile (another process's lock holds only writes).
                        if last {
                            failures.dropped(error, "writing the cache (authorization expiries, selected MVPDs) before stopping")
                        } else if cache.withLock({ $0.putBack(waiting, delay: Self.cacheWriteDelay) }) {
                            failures.dropped(
                                error, "writing the cache (authorization expiries, selected MVPDs; \(CacheQueue.attemptsAllowed) tries)")
                        }
                    }
                }))
    }

    /// Watches `logins`: `deliver` gets the ones among them whose profiles changed — written by this process
    /// (through any instance), by another process on the same SQLite file (as its announcement arrives, `LoginAnnouncement`), or by
    /// another daemon of the fleet (PostgreSQL's `LISTEN`/`NOTIFY`, as the notification arrives on the connection's
    /// socket; all of them after a reconnect) — and reads of watched logins are served from memory meanwhile. `deliver` runs
    /// on the store's worker thread and must not block: hop to your own executor. Keep the watch as long as you
    /// care; it ends when freed or cancelled.
    public func watch(_ logins: Set<LoginKey>, deliver: @escaping @Sendable (Set<LoginKey>) -> Void) -> LoginWatch {
        let watch = feed.add(logins, deliver)
        executor.wake()
        return watch
    }

    /// Reads of profiles served from memory and reads that went to the store, since start (`rpc.stats`).
    public var profileReads: (memory: Int, store: Int) { feed.readCounts }

    /// Store operations that failed since start, and whether the store is failing now (from a failure until the
    /// next operation that succeeds), as `StoreFailureLog` counts them (`rpc.stats`).
    public var failures: (operations: Int, failing: Bool) { executor.failures.counts }

    /// Authorization expiry rows written to the store, and expiries not written because the store already held
    /// them, since start (`rpc.stats`).
    public var authorizationExpiries: (written: Int, unchanged: Int) { cache.withLock { ($0.written, $0.unchanged) } }

    deinit { executor.close() }

    /// Gives back the token-refresh leases of refreshes still under way, runs what is queued, then closes the
    /// database and waits for that: SQLite then folds its write-ahead log into `passbridge.sqlite` and removes the
    /// `-wal`, so the file alone is a complete copy. Calls after it fail at once. The daemon closes its store as it
    /// exits, waiting until `deadline` at the latest; false when the store was still busy then (a PostgreSQL server
    /// that stopped answering), and the process may exit without it.
    @discardableResult
    public func close(by deadline: ContinuousClock.Instant? = nil) -> Bool {
        let held = leases.withLock { leases in
            defer { leases = [:] }
            return leases
        }
        for (scope, until) in held {
            executor.submit { database in _ = try? database.get().releaseTokenRefresh(scope, until: until) }
        }
        return executor.close(wait: true, until: deadline)
    }

    // MARK: entities

    /// The store's device identifier; created (a random UUID) by the first caller of all processes sharing it.
    public func deviceIdentity(isolation: isolated (any Actor)? = #isolation) async throws -> String {
        let proposed = Self.randomUUID()
        return try await executor.run(isolation: isolation) { try $0.deviceIdentity(proposed: proposed) }
    }

    /// A random (version 4) UUID in lower case, `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx` (RFC 9562, 5.4).
    static func randomUUID() -> String {
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }
        return [0..<4, 4..<6, 6..<8, 8..<10, 10..<16].map { hex[$0].joined() }.joined(separator: "-")
    }

    func clientCredentials(isolation: isolated (any Actor)? = #isolation, _ scope: StoreScope) async throws -> ClientCredentials? {
        try await executor.run(isolation: isolation) { try $0.clientCredentials(scope) }
    }

    func insertClientCredentials(
        isolation: isolated (any Actor)? = #isolation, _ credentials: ClientCredentials, _ scope: StoreScope
    ) async throws -> ClientCredentials {
        try await executor.run(isolation: isolation) { try $0.insertClientCredentials(credentials, scope) }
    }

    func deleteClientCredentials(isolation: isolated (any Actor)? = #isolation, _ scope: StoreScope, clientID: String) async throws {
        try await executor.run(isolation: isolation) { try $0.deleteClientCredentials(scope, clientID: clientID) }
    }

    func accessToken(isolation: isolated (any Actor)? = #isolation, _ scope: StoreScope) async throws -> AccessTokenRecord? {
        try await executor.run(isolation: isolation) { try $0.accessToken(scope) }
    }

    /// Saves `record` as the scope's token, which ends a refresh lease on it.
    func saveAccessToken(isolation: isolated (any Actor)? = #isolation, _ record: AccessTokenRecord, _ scope: StoreScope) async throws {
        try await executor.run(isolation: isolation) { try $0.saveAccessToken(record, scope) }
        _ = leases.withLock { $0.removeValue(forKey: scope) }
    }

    /// Takes the scope's refresh lease until `until` (epoch ms) when no lease runs at `now` and the stored token is
    /// still `seen`; true when taken.
    func claimTokenRefresh(
        isolation: isolated (any Actor)? = #isolation, _ scope: StoreScope, seen: String, now: Int64, until: Int64
    ) async throws -> Bool {
        let claimed = try await executor.run(isolation: isolation) { try $0.claimTokenRefresh(scope, seen: seen, now: now, until: until) }
        if claimed { leases.withLock { $0[scope] = until } }
        return claimed
    }

    /// Gives back the lease ``claimTokenRefresh(isolation:_:seen:now:until:)`` took until `until`.
    func releaseTokenRefresh(isolation: isolated (any Actor)? = #isolation, _ scope: StoreScope, until: Int64) async throws {
        leases.withLock { if $0[scope] == until { $0[scope] = nil } }
        try await executor.run(isolation: isolation) { try $0.releaseTokenRefresh(scope, until: until) }
    }

    /// Every profile stored under `logins`, by login and then MVPD id: from memory, with no store call, when every
    /// login is watched and in memory (`watch`) and not `fresh`; else read in the store, and what differs from memory
    /// then is told to the watchers at once.
    func profiles(
        isolation: isolated (any Actor)? = #isolation, of logins: Set<LoginKey>, fresh: Bool = false
    ) async throws -> [LoginKey: [String: StoredProfile]] {
        if !fresh, let known = feed.cached(logins) { return known }
        return try await executor.run(isolation: isolation) { [feed] database in try Self.read(logins, in: database, feed: feed) }
    }

    /// Store thread: the profiles of `logins` as the database holds them, told to `feed` (memory follows the store).
    private static func read(
        _ logins: Set<LoginKey>, in database: any StoreDatabase, feed: LoginFeed
    ) throws -> [LoginKey: [String: StoredProfile]] {
        var byLogin: [LoginKey: [String: StoredProfile]] = [:]
        for login in logins { byLogin[login] = try database.profiles(login) }
        feed.read(byLogin)
        return byLogin
    }

    /// The profiles stored under `keys`, in their order (keys without a profile are left out), as
    /// ``profiles(isolation:of:fresh:)`` reads them.
    func profiles(
        isolation: isolated (any Actor)? = #isolation, _ keys: [ProfileKey], fresh: Bool = false
    ) async throws -> [(ProfileKey, StoredProfile)] {
        let byLogin = try await profiles(of: Set(keys.map(\.login)), fresh: fresh)
        return keys.compactMap { key in byLogin[key.login]?[key.mvpd].map { (key, $0) } }
    }

    /// As ``profiles(isolation:of:fresh:)``, always read in the store, each profile with its authorization expiry for
    /// `resource` (nil when none or no resource).
    func profiles(
        isolation: isolated (any Actor)? = #isolation, of logins: Set<LoginKey>, authorizationExpiryOf resource: String?
    ) async throws -> [LoginKey: [String: (StoredProfile, Int64?)]] {
        try await executor.run(isolation: isolation) { [feed] database in
            try Self.read(logins, in: database, feed: feed).reduce(into: [:]) { read, entry in
                read[entry.key] = try entry.value.reduce(into: [:]) { profiles, profile in
                    let key = ProfileKey(login: entry.key, mvpd: profile.key)
                    profiles[profile.key] = (profile.value, try resource.flatMap { try database.authorizationExpiry(key, resource: $0) })
                }
            }
        }
    }

    /// Durable; memory and the login's watchers follow once it is written, except `writer`: the watch of the
    /// instance that wrote it, which knows it already (a watcher is told only what others changed).
    func saveProfile(
        isolation: isolated (any Actor)? = #isolation, _ profile: StoredProfile, _ key: ProfileKey, writer: LoginWatch? = nil
    ) async throws {
        try await executor.run(isolation: isolation) { [feed] database in
            try database.saveProfile(profile, key)
            feed.wrote(profile, key, by: writer?.id)
        }
    }

    /// Durable; memory and the login's watchers (but `writer`) follow once it is deleted.
    func deleteProfile(isolation: isolated (any Actor)? = #isolation, _ key: ProfileKey, writer: LoginWatch? = nil) async throws {
        try await executor.run(isolation: isolation) { [feed] database in
            try database.deleteProfile(key)
            feed.wrote(nil, key, by: writer?.id)
        }
    }

    func selectedProvider(isolation: isolated (any Actor)? = #isolation, _ key: LoginKey) async throws -> String? {
        try await executor.run(isolation: isolation) { try $0.selectedProvider(key) }
    }

    func authorizationExpiry(isolation: isolated (any Actor)? = #isolation, _ key: ProfileKey, resource: String) async throws -> Int64? {
        try await executor.run(isolation: isolation) { try $0.authorizationExpiry(key, resource: resource) }
    }

    /// Queues cache writes without waiting for them: `record` names them on the caller's thread; they are made by
    /// the worker together with the others waiting, within `cacheWriteDelay` or before its next job, whichever
    /// comes first (so a read sees them), in one transaction without an fsync (they may be lost in a crash). A write
    /// that fails (the database restarting) is tried again with the next ones, a few times (`CacheQueue`), then
    /// dropped and logged as a store failure (`StoreFailureLog`); while the connection is known to be gone writes
    /// are not kept back, so that the first one after a restart reconnects. An authorization expiry the store already holds, as far as
    /// this process knows, is not written again (counted in `authorizationExpiries.unchanged`).
    func submit(_ record: (inout CacheWrites) -> Void) {
        var writes = CacheWrites()
        record(&writes)
        let feed = self.feed
        // While the connection is gone the write is made at once: the first call after a restart reconnects.
        let delay = executor.connectionLost ? .zero : Self.cacheWriteDelay
        let first = cache.withLock { $0.add(writes, delay: delay, stored: feed.storedExpiry) }
        if first { executor.wake() }
    }

    // MARK: administration (`passbridge state`)

    /// Every stored login; never a token or a secret.
    public func logins(isolation: isolated (any Actor)? = #isolation) async throws -> [StoredLogin] {
        try await executor.run(isolation: isolation) { try $0.allProfiles() }.map { StoredLogin($0, $1) }
    }

    /// Deletes the logins `selection` takes (every one by default), with their selections and authorization
    /// expiries; returns the number of logins deleted. DCR credentials and the device identifier stay.
    public func reset(isolation: isolated (any Actor)? = #isolation, _ selection: LoginSelection = LoginSelection()) async throws -> Int {
        try await executor.run(isolation: isolation) { [feed] database in
            let deleted = try database.reset(selection)
            feed.forget(selection.change)
            return deleted
        }
    }
}

/// A database opened before its worker thread exists, handed to that one thread.
private struct OpenedDatabase: @unchecked Sendable {
    let database: any StoreDatabase
    init(_ database: any StoreDatabase) { self.database = database }
}

/// A store failure.
public enum TokenStoreError: Error, Equatable, CustomStringConvertible {
    /// A file system call failed: what was done, and errno.
    case io(operation: String, errno: Int32)
    /// An SQLite call failed: the operation, and SQLite's (extended) result code.
    case sqlite(operation: String, code: Int32)
    /// libsqlite3.so.0 could not be loaded (the first time a database was opened): the loader's reason.
    case sqliteLibrary(String)
    /// A PostgreSQL call failed: the operation, and the server's or libpq's message.
    case postgreSQL(operation: String, message: String)
    /// The database was written by a newer PassBridge (its schema version).
    case newerSchema(Int32)
    /// The state path exists and is not a directory (it is left untouched).
    case notADirectory(path: String)
    /// The state directory exists but is not private to this user (it is left untouched): path and why.
    case unsafeDirectory(path: String, reason: String)
    /// A file of the store in the state directory may not be used (it is left untouched): path, why and what to do.
    case unsafeStoreFile(path: String, reason: String)

    /// Whether the database's file itself is damaged (SQLite's SQLITE_CORRUPT or SQLITE_NOTADB, with their extended
    /// codes), as opposed to a store that is away, locked or full.
    public var isCorruption: Bool {
        guard case .sqlite(_, let code) = self else { return false }
        return [11, 26].contains(code & 0xFF)
    }

    public var description: String {
        switch self {
        case .io(let what, let code): return "\(what): \(String(cString: strerror(code)))"
        case .sqlite(let operation, let code) where code & 0xFF == SQLITE_BUSY:
            return "SQLite \(operation) failed: \(String(cString: csq_errstr(code))) (another process holds its lock: a second "
                + "daemon's write, a backup, an sqlite3 shell; it works again once that lets go)"
        case .sqlite(let operation, let code): return "SQLite \(operation) failed: \(String(cString: csq_errstr(code)))"
        case .sqliteLibrary(let reason): return "SQLite could not be loaded: \(reason) (Debian package: libsqlite3-0)"
        case .postgreSQL(let operation, let message): return "PostgreSQL \(operation) failed: \(message)"
        case .newerSchema(let version): return "the store has schema version \(version), newer than this PassBridge knows"
        case .notADirectory(let path): return "\(path) is not a directory"
        case .unsafeDirectory(let path, let reason): return "refusing state directory \(path): \(reason)"
        case .unsafeStoreFile(let path, let reason): return "refusing store file \(path): \(reason)"
        }
    }
}

/// The state directory rule: created 0700 when missing; an existing directory is used as it is when it belongs
/// to the effective user and neither its group nor others may write to it. Nothing existing is chmod'ed.
public enum StateDirectoryRule {
    public static func prepare(_ path: String) throws(TokenStoreError) {
        var info = stat()
        if stat(path, &info) != 0 {
            guard errno == ENOENT else { throw .io(operation: "cannot inspect state directory \(path)", errno: errno) }
            let parent = FilePath.parent(of: path)
            if !parent.isEmpty, parent != path, stat(parent, &info) != 0 { try prepareParents(parent) }
            if mkdir(path, 0o700) != 0, errno != EEXIST { throw .io(operation: "cannot create state directory \(path)", errno: errno) }
            if chmod(path, 0o700) != 0 { throw .io(operation: "cannot chmod state directory \(path)", errno: errno) }
            guard stat(path, &info) == 0 else { throw .io(operation: "cannot inspect state directory \(path)", errno: errno) }
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw .notADirectory(path: path) }
        if info.st_uid != geteuid() {
            // Most often the daemon's own directory, read by an operator as root or as themselves: say whose it is.
            // Root's is no daemon's own: the way out is a directory of this user's, not root.
            let owner = getpwuid(info.st_uid).map { String(cString: $0.pointee.pw_name) }
            let advice =
                info.st_uid == 0
                ? "name a directory of this user's own with --state-dir"
                : "run this as its owner\(owner.map { ", e.g. sudo -u \($0) …" } ?? "")"
            throw .unsafeDirectory(
                path: path,
                reason: "owned by uid \(info.st_uid)\(owner.map { " (\($0))" } ?? ""), not by this user (uid \(geteuid())); \(advice)")
        }
        if info.st_mode & 0o022 != 0 {
            let mode = String(info.st_mode & 0o7777, radix: 8)
            // A sticky one is shared by design (/tmp): changing its mode would break its other users.
            let advice =
                info.st_mode & S_ISVTX != 0
                ? "a directory shared by all, such as /tmp: name one of its own with --state-dir, such as \(path)/passbridge"
                : "chmod go-w \(path), or name another with --state-dir"
            throw .unsafeDirectory(path: path, reason: "its group or others may write to it (mode \(mode); \(advice))")
        }
    }

    /// Creates the missing parents, outermost first, with mode 0777 less the umask (they are not the state
    /// directory).
    private static func prepareParents(_ path: String) throws(TokenStoreError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o777) != 0, errno != EEXIST { throw .io(operation: "cannot create \(prefix)", errno: errno) }
        }
    }
}
