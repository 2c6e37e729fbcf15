import CSQLite
import Glibc
import JSON
import ThreadAffinity

/// The embedded store: one SQLite file, WAL journal, one table per entity, schema upgraded in place by numbered
/// migrations (`PRAGMA user_version` is the last one applied). Durable writes commit with `synchronous=FULL`;
/// cache writes with `synchronous=NORMAL` (no fsync per call in WAL mode).
final class SQLiteStore: StoreDatabase {
    let database: SQLiteDatabase
    var thread: ThreadAffinity { database.thread }

    init(path: String, busyTimeoutMillis: Int32 = 5000) throws(TokenStoreError) {
        database = try SQLiteDatabase(path: path, busyTimeoutMillis: busyTimeoutMillis)
        // A store written by a newer PassBridge is refused before anything in it changes (not even its journal mode).
        let version = try SQLiteMigrations.userVersion(database)
        if version > SQLiteMigrations.latest { throw .newerSchema(version) }
        try Self.enterWAL(database, timeoutMillis: busyTimeoutMillis)
        try database.execute("PRAGMA synchronous=FULL")
        try SQLiteMigrations.upgrade(database)
        dataVersion = try Self.integer(database, "PRAGMA data_version")
        loginChanges = try Self.integer(database, "SELECT counter FROM login_changes WHERE slot = 1")
        announcement = LoginAnnouncement(databasePath: path)
    }

    /// Where this store tells the other processes on the file of its login changes, and hears of theirs (without a
    /// watch, other processes' changes are looked for at the look's interval).
    private let announcement: LoginAnnouncement

    /// `PRAGMA journal_mode=WAL`, waiting up to `timeoutMillis` for another connection's write lock. SQLite's busy
    /// handler does not wait here: the pragma reads the file's header under a shared lock before it asks for the
    /// write lock, and two connections that both did so would wait for each other for ever, so SQLite fails the
    /// second one at once with SQLITE_BUSY ("database is locked"; sqlite3_busy_handler's documentation calls this
    /// the deadlock case). That happens when two connections, in one process or two, open a new file together;
    /// the one refused lets go of its shared lock and tries again after a millisecond or two.
    private static func enterWAL(_ database: SQLiteDatabase, timeoutMillis: Int32) throws(TokenStoreError) {
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(timeoutMillis)
        while true {
            do throws(TokenStoreError) {
                guard try database.text("PRAGMA journal_mode=WAL") == "wal" else {
                    throw .sqlite(operation: "journal_mode=WAL", code: SQLITE_ERROR)
                }
                return
            } catch .sqlite(_, let code) where code & 0xFF == SQLITE_BUSY && clock.now < deadline {
                usleep(1000 + UInt32.random(in: 0..<1000))
            }
        }
    }

    /// `PRAGMA data_version` when last read: it moves when another connection (another process) commits, and
    /// never for this connection's own commits (SQLite's "PRAGMA data_version").
    private var dataVersion: Int64
    /// `login_changes.counter` when last read: every write of a login bumps it (`bumpLoginChanges`).
    private var loginChanges: Int64

    private static func integer(_ database: SQLiteDatabase, _ sql: String) throws(TokenStoreError) -> Int64 {
        var value: Int64 = 0
        try database.query(sql, []) { row in value = row.integer(0) }
        return value
    }

    /// `.unknown` when another process changed a login since the last call (SQLite does not say which), else
    /// `.none`. While nothing was committed elsewhere this is one read of the WAL index (no disk I/O); after
    /// another process's commit, one read of the counter tells a change of logins from a cache write.
    func externalChanges(watching: Bool) throws -> ExternalChanges {
        announcement.drain()
        announced = false
        let version = try Self.integer(database, "PRAGMA data_version")
        let seen = otherChangeSeen
        otherChangeSeen = false
        guard version != dataVersion else { return seen ? .unknown : .none }
        dataVersion = version
        let changes = try Self.integer(database, "SELECT counter FROM login_changes WHERE slot = 1")
        defer { loginChanges = changes }
        return changes != loginChanges || seen ? .unknown : .none
    }

    /// Inside a login's write transaction (after its first write, so that the counter read is the latest): tells
    /// the other processes (`externalChanges`). This process's own count follows, since its memory is already
    /// right; a change of another process found on the way is kept for the next `externalChanges`.
    private func bumpLoginChanges() throws(TokenStoreError) {
        try database.execute("UPDATE login_changes SET counter = counter + 1 WHERE slot = 1")
        let counter = try Self.integer(database, "SELECT counter FROM login_changes WHERE slot = 1")
        if counter != loginChanges + 1 { otherChangeSeen = true }
        loginChanges = counter
    }

    /// Another process's change of a login was found while this one wrote its own.
    private var otherChangeSeen = false

    /// `body`, a transaction that changes a login (`bumpLoginChanges` inside), then, once it has committed, its
    /// announcement to the other processes on the file. This store's own watch sees it too: it is drained at once,
    /// so that the worker does not wake for it, and the look it would have made comes before the worker sleeps
    /// (`changesWaiting`), while it is awake: it finds another process's change whose announcement the drain took.
    private func loginTransaction<T>(_ body: () throws(TokenStoreError) -> T) throws(TokenStoreError) -> T {
        let result = try database.transaction(body)
        announcement.announce()
        announcement.drain()
        announced = true
        return result
    }

    /// This store announced a login change and drained its own watch since its last look.
    private var announced = false

    func deviceIdentity(proposed: String) throws -> String {
        if let stored = try database.text("SELECT device_id FROM device_identity WHERE slot = 1") { return stored }
        return try database.transaction { () throws(TokenStoreError) -> String in
            try database.execute("INSERT OR IGNORE INTO device_identity(slot, device_id) VALUES (1, ?)", [.text(proposed)])
            return try database.text("SELECT device_id FROM device_identity WHERE slot = 1") ?? proposed
        }
    }

    func clientCredentials(_ scope: StoreScope) throws -> ClientCredentials? {
        var result: ClientCredentials?
        try database.query(
            "SELECT client_id, client_secret FROM client_credentials WHERE backend = ? AND statement_sha256 = ?", Self.values(scope)
        ) { row in result = ClientCredentials(id: row.text(0) ?? "", secret: row.text(1) ?? "") }
        return result
    }

    func insertClientCredentials(_ credentials: ClientCredentials, _ scope: StoreScope) throws -> ClientCredentials {
        try database.transaction { () throws(TokenStoreError) in
            try database.execute(
                "INSERT OR IGNORE INTO client_credentials(backend, statement_sha256, client_id, client_secret) VALUES (?, ?, ?, ?)",
                Self.values(scope) + [.text(credentials.id), .text(credentials.secret)])
        }
        return try clientCredentials(scope) ?? credentials
    }

    func deleteClientCredentials(_ scope: StoreScope, clientID: String) throws {
        try database.transaction { () throws(TokenStoreError) in
            try database.execute(
                "DELETE FROM client_credentials WHERE backend = ? AND statement_sha256 = ? AND client_id = ?",
                Self.values(scope) + [.text(clientID)])
            try database.execute(
                "DELETE FROM access_tokens WHERE backend = ? AND statement_sha256 = ? AND client_id = ?",
                Self.values(scope) + [.text(clientID)])
        }
    }

    func accessToken(_ scope: StoreScope) throws -> AccessTokenRecord? {
        var result: AccessTokenRecord?
        try database.query(
            "SELECT client_id, token, expires_ms FROM access_tokens WHERE backend = ? AND statement_sha256 = ?", Self.values(scope)
        ) { row in result = AccessTokenRecord(clientID: row.text(0) ?? "", token: row.text(1) ?? "", expires: row.integer(2)) }
        return result
    }

    func saveAccessToken(_ record: AccessTokenRecord, _ scope: StoreScope) throws {
        try cacheWrite(
            """
            INSERT INTO access_tokens(backend, statement_sha256, client_id, token, expires_ms, refreshing_until_ms) VALUES (?, ?, ?, ?, ?, 0)
            ON CONFLICT(backend, statement_sha256) DO UPDATE SET client_id = excluded.client_id, token = excluded.token,
            expires_ms = excluded.expires_ms, refreshing_until_ms = 0
            """, Self.values(scope) + [.text(record.clientID), .text(record.token), .integer(record.expires)])
    }

    func claimTokenRefresh(_ scope: StoreScope, seen: String, now: Int64, until: Int64) throws -> Bool {
        var claimed = false
        try cacheWrite(
            """
            INSERT INTO access_tokens(backend, statement_sha256, client_id, token, expires_ms, refreshing_until_ms) VALUES (?, ?, '', '', 0, ?)
            ON CONFLICT(backend, statement_sha256) DO UPDATE SET refreshing_until_ms = excluded.refreshing_until_ms
            WHERE refreshing_until_ms < ? AND token = ? RETURNING 1
            """, Self.values(scope) + [.integer(until), .integer(now), .text(seen)]
        ) { _ in claimed = true }
        return claimed
    }

    func releaseTokenRefresh(_ scope: StoreScope, until: Int64) throws {
        try cacheWrite(
            "UPDATE access_tokens SET refreshing_until_ms = 0 WHERE backend = ? AND statement_sha256 = ? AND refreshing_until_ms = ?",
            Self.values(scope) + [.integer(until)])
    }

    func profiles(_ key: LoginKey) throws -> [String: StoredProfile] {
        var result: [String: StoredProfile] = [:]
        try database.query(
            "SELECT mvpd, profile, not_after_ms FROM profiles WHERE backend = ? AND statement_sha256 = ? AND device_id = ? AND requestor = ?",
            Self.values(key)
        ) { row in result[row.text(0) ?? ""] = StoredProfile(json: row.text(1) ?? "", notAfter: row.integer(2)) }
        return result
    }

    func saveProfile(_ profile: StoredProfile, _ key: ProfileKey) throws {
        try loginTransaction { () throws(TokenStoreError) in
            try database.execute(
                """
                INSERT INTO profiles(backend, statement_sha256, device_id, requestor, mvpd, not_after_ms, profile) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(backend, statement_sha256, device_id, requestor, mvpd)
                DO UPDATE SET not_after_ms = excluded.not_after_ms, profile = excluded.profile
                """, Self.values(key) + [.integer(profile.notAfter), .text(profile.json)])
            try bumpLoginChanges()
        }
    }

    func deleteProfile(_ key: ProfileKey) throws {
        let condition = "backend = ? AND statement_sha256 = ? AND device_id = ? AND requestor = ? AND mvpd = ?"
        try loginTransaction { () throws(TokenStoreError) in
            try database.execute("DELETE FROM profiles WHERE " + condition, Self.values(key))
            try database.execute("DELETE FROM authorization_expiries WHERE " + condition, Self.values(key))
            try bumpLoginChanges()
        }
    }

    func selectedProvider(_ key: LoginKey) throws -> String? {
        try database.text(
            "SELECT mvpd FROM selected_providers WHERE backend = ? AND statement_sha256 = ? AND device_id = ? AND requestor = ?",
            Self.values(key))
    }

    func authorizationExpiry(_ key: ProfileKey, resource: String) throws -> Int64? {
        var result: Int64?
        try database.query(
            """
            SELECT not_after_ms FROM authorization_expiries
            WHERE backend = ? AND statement_sha256 = ? AND device_id = ? AND requestor = ? AND mvpd = ? AND resource = ?
            """, Self.values(key) + [.text(resource)]
        ) { row in result = row.integer(0) }
        return result
    }

    func writeCache(expiries: [ExpiryKey: Int64], selections: [LoginKey: String?]) throws -> Set<ExpiryKey> {
        try database.execute("PRAGMA synchronous=NORMAL")
        defer { _ = try? database.execute("PRAGMA synchronous=FULL") }
        // A cache write that finds another process's write lock is tried again later (`CacheQueue.putBack`): it
        // waits briefly, not for the busy timeout, so that the jobs behind it on the worker are not held.
        try database.waitingForLocks(atMost: Self.cacheLockWaitMillis) { () throws(TokenStoreError) in
            try database.transaction { () throws(TokenStoreError) in
                try writeCacheRows(expiries: expiries, selections: selections)
            }
        }
        return []
    }

    /// How long a cache write waits for another process's write lock (ms).
    static let cacheLockWaitMillis: Int32 = 100

    private func writeCacheRows(expiries: [ExpiryKey: Int64], selections: [LoginKey: String?]) throws(TokenStoreError) {
        for (key, notAfter) in expiries {
            try database.execute(
                """
                INSERT INTO authorization_expiries(backend, statement_sha256, device_id, requestor, mvpd, resource, not_after_ms)
                SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 WHERE EXISTS (SELECT 1 FROM profiles
                    WHERE backend = ?1 AND statement_sha256 = ?2 AND device_id = ?3 AND requestor = ?4 AND mvpd = ?5)
                ON CONFLICT(backend, statement_sha256, device_id, requestor, mvpd, resource) DO UPDATE SET not_after_ms = excluded.not_after_ms
                """, Self.values(key.profile) + [.text(key.resource), .integer(notAfter)])
        }
        for (key, mvpd) in selections {
            if let mvpd {
                try database.execute(
                    """
                    INSERT INTO selected_providers(backend, statement_sha256, device_id, requestor, mvpd) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT(backend, statement_sha256, device_id, requestor) DO UPDATE SET mvpd = excluded.mvpd
                    """, Self.values(key) + [.text(mvpd)])
            } else {
                try database.execute(
                    "DELETE FROM selected_providers WHERE backend = ? AND statement_sha256 = ? AND device_id = ? AND requestor = ?",
                    Self.values(key))
            }
        }
    }

    /// The watch of the database file (`LoginAnnouncement`): readable once another process on the file (or this one)
    /// announced a login change; nil without one (other processes' commits are then looked for at the look's
    /// interval).
    var notificationSocket: Int32? { announcement.watch }

    var changesWaiting: Bool { otherChangeSeen || announced }

    var connectionLost: Bool { false }

    func allProfiles() throws -> [(ProfileKey, StoredProfile)] {
        var rows: [(ProfileKey, StoredProfile)] = []
        try database.query(
            "SELECT backend, statement_sha256, device_id, requestor, mvpd, profile, not_after_ms FROM profiles ORDER BY backend, requestor, mvpd, device_id",
            []
        ) { row in
            let scope = StoreScope(backend: row.text(0) ?? "", statementSHA256: row.text(1) ?? "")
            let key = ProfileKey(
                login: LoginKey(scope: scope, device: row.text(2) ?? "", requestor: row.text(3) ?? ""), mvpd: row.text(4) ?? "")
            rows.append((key, StoredProfile(json: row.text(5) ?? "", notAfter: row.integer(6))))
        }
        return rows
    }

    func reset(_ selection: LoginSelection) throws -> Int {
        try loginTransaction { () throws(TokenStoreError) -> Int in
            let (condition, arguments) = selection.condition { _ in "?" }
            try database.execute("DELETE FROM profiles" + condition, arguments)
            let deleted = database.changes
            try database.execute("DELETE FROM selected_providers" + condition, arguments)
            try database.execute("DELETE FROM authorization_expiries" + condition, arguments)
            try bumpLoginChanges()
            return deleted
        }
    }

    /// A write that may be lost in a crash: committed without an fsync.
    private func cacheWrite(_ sql: String, _ arguments: [SQLValue], row: (SQLiteDatabase.Row) -> Void = { _ in }) throws(TokenStoreError) {
        try database.execute("PRAGMA synchronous=NORMAL")
        defer { _ = try? database.execute("PRAGMA synchronous=FULL") }
        try database.query(sql, arguments, row: row)
    }

    static func values(_ scope: StoreScope) -> [SQLValue] { [.text(scope.backend), .text(scope.statementSHA256)] }
    static func values(_ key: LoginKey) -> [SQLValue] { values(key.scope) + [.text(key.device), .text(key.requestor)] }
    static func values(_ key: ProfileKey) -> [SQLValue] { values(key.login) + [.text(key.mvpd)] }
}
