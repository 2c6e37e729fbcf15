import ThreadAffinity

/// The fleet's store: one PostgreSQL database shared by every daemon. The same tables as the embedded store,
/// with strings as `bytea` (kept byte for byte) and times as `bigint` epoch ms; numbered migrations recorded in
/// `passbridge_migrations`, applied under an advisory lock so that daemons starting together migrate once.
/// Commits are durable (the server's `synchronous_commit`) except cache writes, committed without waiting.
///
/// Each operation runs in ``PostgreSQLDatabase/withReconnect(_:_:_:)``: when the connection was lost (the server
/// restarted, a failover) it reconnects and runs again, once. Every operation is idempotent (reads, inserts that do
/// nothing on conflict, upserts of given values, deletes by key) except two, run again only when their COMMIT was
/// never sent: `claimTokenRefresh` (a second run would find its own lease and answer that another process holds
/// it) and `reset` (a second run would count 0 deleted logins).
final class PostgreSQLStore: StoreDatabase {
    let database: PostgreSQLDatabase
    var thread: ThreadAffinity { database.thread }
    /// Whether this session listens for the other daemons' login changes (`externalChanges`).
    private var listening = false

    /// `log` receives the reconnects (``PostgreSQLDatabase``).
    init(url: String, log: EngineLog? = nil) throws(TokenStoreError) {
        database = try PostgreSQLDatabase(url: url, log: log)
        try migrate()
    }

    static let migrations: [[String]] = [
        [
            "CREATE TABLE device_identity (slot integer PRIMARY KEY CHECK (slot = 1), device_id bytea NOT NULL)",
            """
            CREATE TABLE client_credentials (backend bytea NOT NULL, statement_sha256 bytea NOT NULL, client_id bytea NOT NULL,
            client_secret bytea NOT NULL, PRIMARY KEY (backend, statement_sha256))
            """,
            """
            CREATE TABLE access_tokens (backend bytea NOT NULL, statement_sha256 bytea NOT NULL, client_id bytea NOT NULL,
            token bytea NOT NULL, expires_ms bigint NOT NULL, refreshing_until_ms bigint NOT NULL, PRIMARY KEY (backend, statement_sha256))
            """,
            """
            CREATE TABLE profiles (backend bytea NOT NULL, statement_sha256 bytea NOT NULL, device_id bytea NOT NULL, requestor bytea NOT NULL,
            mvpd bytea NOT NULL, not_after_ms bigint NOT NULL, profile bytea NOT NULL,
            PRIMARY KEY (backend, statement_sha256, device_id, requestor, mvpd))
            """,
            """
            CREATE TABLE selected_providers (backend bytea NOT NULL, statement_sha256 bytea NOT NULL, device_id bytea NOT NULL,
            requestor bytea NOT NULL, mvpd bytea NOT NULL, PRIMARY KEY (backend, statement_sha256, device_id, requestor))
            """,
            """
            CREATE TABLE authorization_expiries (backend bytea NOT NULL, statement_sha256 bytea NOT NULL, device_id bytea NOT NULL,
            requestor bytea NOT NULL, mvpd bytea NOT NULL, resource bytea NOT NULL, not_after_ms bigint NOT NULL,
            PRIMARY KEY (backend, statement_sha256, device_id, requestor, mvpd, resource))
            """,
        ]
    ]

    /// Applies the migrations not applied yet. A database that has them all (every start but the first) is only
    /// read: no lock, no CREATE, so that a role with no CREATE on the schema serves once the tables are made, and
    /// one that may only read them runs `passbridge state list` (Protocol/README.md, "Fleet mode").
    private func migrate() throws(TokenStoreError) {
        let made = try database.query("SELECT count(to_regclass('passbridge_migrations'))", []).first?.first?.integer == 1
        if made, try appliedVersion() == Self.migrations.count { return }
        try database.transaction { () throws(TokenStoreError) in
            try database.execute("SELECT pg_advisory_xact_lock(7215870355)")
            try database.execute("CREATE TABLE IF NOT EXISTS passbridge_migrations (version bigint PRIMARY KEY)")
            for number in try appliedVersion()..<Self.migrations.count {
                for statement in Self.migrations[number] { try database.execute(statement) }
                try database.execute("INSERT INTO passbridge_migrations(version) VALUES ($1)", [.integer(Int64(number + 1))])
            }
        }
    }

    /// How many migrations `passbridge_migrations` records; `.newerSchema` for more than this PassBridge knows.
    private func appliedVersion() throws(TokenStoreError) -> Int {
        let version = Int(try database.query("SELECT coalesce(max(version), 0) FROM passbridge_migrations", []).first?.first?.integer ?? 0)
        if version > Self.migrations.count { throw .newerSchema(Int32(version)) }
        return version
    }

    /// An idempotent operation of one statement: its rows.
    private func rows(
        _ sql: String, _ arguments: [SQLValue], _ operation: String = #function
    ) throws(TokenStoreError) -> [[PostgreSQLDatabase.Cell]] {
        try database.withReconnect(.idempotent, operation) { () throws(TokenStoreError) in try database.query(sql, arguments) }
    }

    func deviceIdentity(proposed: String) throws -> String {
        try database.withReconnect(.idempotent) { () throws(TokenStoreError) in
            try database.execute("INSERT INTO device_identity(slot, device_id) VALUES (1, $1) ON CONFLICT DO NOTHING", [.text(proposed)])
            return try database.query("SELECT device_id FROM device_identity WHERE slot = 1", []).first?.first?.text ?? proposed
        }
    }

    func clientCredentials(_ scope: StoreScope) throws -> ClientCredentials? {
        try database.withReconnect(.idempotent) { () throws(TokenStoreError) in try readClientCredentials(scope) }
    }

    private func readClientCredentials(_ scope: StoreScope) throws(TokenStoreError) -> ClientCredentials? {
        try database.query(
            "SELECT client_id, client_secret FROM client_credentials WHERE backend = $1 AND statement_sha256 = $2",
            SQLiteStore.values(scope)
        )
        .first.map { ClientCredentials(id: $0[0].text ?? "", secret: $0[1].text ?? "") }
    }

    func insertClientCredentials(_ credentials: ClientCredentials, _ scope: StoreScope) throws -> ClientCredentials {
        try database.withReconnect(.idempotent) { () throws(TokenStoreError) in
            try database.execute(
                "INSERT INTO client_credentials(backend, statement_sha256, client_id, client_secret) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
                SQLiteStore.values(scope) + [.text(credentials.id), .text(credentials.secret)])
            return try readClientCredentials(scope) ?? credentials
        }
    }

    func deleteClientCredentials(_ scope: StoreScope, clientID: String) throws {
        try database.withReconnect(.idempotent) { () throws(TokenStoreError) in
            try database.transaction { () throws(TokenStoreError) in
                let arguments = SQLiteStore.values(scope) + [.text(clientID)]
                try database.execute(
                    "DELETE FROM client_credentials WHERE backend = $1 AND statement_sha256 = $2 AND client_id = $3", arguments)
                try database.execute(
                    "DELETE FROM access_tokens WHERE backend = $1 AND statement_sha256 = $2 AND client_id = $3", arguments)
            }
        }
    }

    func accessToken(_ scope: StoreScope) throws -> AccessTokenRecord? {
        try rows(
            "SELECT client_id, token, expires_ms FROM access_tokens WHERE backend = $1 AND statement_sha256 = $2", SQLiteStore.values(scope)
        )
        .first.map { AccessTokenRecord(clientID: $0[0].text ?? "", token: $0[1].text ?? "", expires: $0[2].integer) }
    }

    func saveAccessToken(_ record: AccessTokenRecord, _ scope: StoreScope) throws {
        try cacheWrite(
            """
            INSERT INTO access_tokens(backend, statement_sha256, client_id, token, expires_ms, refreshing_until_ms) VALUES ($1, $2, $3, $4, $5, 0)
            ON CONFLICT (backend, statement_sha256) DO UPDATE SET client_id = excluded.client_id, token = excluded.token,
            expires_ms = excluded.expires_ms, refreshing_until_ms = 0
            """, SQLiteStore.values(scope) + [.text(record.clientID), .text(record.token), .integer(record.expires)])
    }

    /// In a transaction of its own, so that a connection lost before its COMMIT was sent lets it run again.
    func claimTokenRefresh(_ scope: StoreScope, seen: String, now: Int64, until: Int64) throws -> Bool {
        try database.withReconnect(.untilCommitSent) { () throws(TokenStoreError) in
            try database.transaction { () throws(TokenStoreError) in
                !(try database.query(
                    """
                    INSERT INTO access_tokens(backend, statement_sha256, client_id, token, expires_ms, refreshing_until_ms) VALUES ($1, $2, ''::bytea, ''::bytea, 0, $4)
                    ON CONFLICT (backend, statement_sha256) DO UPDATE SET refreshing_until_ms = excluded.refreshing_until_ms
                    WHERE access_tokens.refreshing_until_ms < $3 AND access_tokens.token = $5 RETURNING 1
                    """, SQLiteStore.values(scope) + [.integer(now), .integer(until), .text(seen)]
                ).isEmpty)
            }
        }
    }

    func releaseTokenRefresh(_ scope: StoreScope, until: Int64) throws {
        try cacheWrite(
            "UPDATE access_tokens SET refreshing_until_ms = 0 WHERE backend = $1 AND statement_sha256 = $2 AND refreshing_until_ms = $3",
            SQLiteStore.values(scope) + [.integer(until)])
    }

    func profiles(_ key: LoginKey) throws -> [String: StoredProfile] {
        var result: [String: StoredProfile] = [:]
        for row in try rows(
            "SELECT mvpd, profile, not_after_ms FROM profiles WHERE backend = $1 AND statement_sha256 = $2 AND device_id = $3 AND requestor = $4",
            SQLiteStore.values(key))
        {
            result[row[0].text ?? ""] = StoredProfile(json: row[1].text ?? "", notAfter: row[2].integer)
        }
        return result
    }

    /// With a notification of the change to the other daemons (`LoginNotification`), sent by the same commit.
    func saveProfile(_ profile: StoredProfile, _ key: ProfileKey) throws {
        try database.withReconnect(.idempotent) { () throws(TokenStoreError) in
            try database.transaction { () throws(TokenStoreError) in
                try database.execute(
                    """
                    INSERT INTO profiles(backend, statement_sha256, device_id, requestor, mvpd, not_after_ms, profile) VALUES ($1, $2, $3, $4, $5, $6, $7)
                    ON CONFLICT (backend, statement_sha256, device_id, requestor, mvpd)
                    DO UPDATE SET not_after_ms = excluded.not_after_ms, profile = excluded.profile
                    """, SQLiteStore.values(key) + [.integer(profile.notAfter), .text(profile.json)])
                try notify(.login(key.login))
            }
        }
    }

    /// With a notification of the change to the other daemons, sent by the same commit.
    func deleteProfile(_ key: ProfileKey) throws {
        let condition = "backend = $1 AND statement_sha256 = $2 AND device_id = $3 AND requestor = $4 AND mvpd = $5"
        try database.withReconnect(.idempotent) { () throws(TokenStoreError) in
            try database.transaction { () throws(TokenStoreError) in
                try database.execute("DELETE FROM profiles WHERE " + condition, SQLiteStore.values(key))
                try database.execute("DELETE FROM authorization_expiries WHERE " + condition, SQLiteStore.values(key))
                try notify(.login(key.login))
            }
        }
    }

    /// Queues `change` on the channel; PostgreSQL delivers it to the listening sessions when the transaction
    /// commits, and not at all when it rolls back.
    private func notify(_ change: LoginChange) throws(TokenStoreError) {
        try database.execute(
            "SELECT pg_notify('\(LoginNotification.channel)', convert_from($1, 'UTF8'))", [.text(LoginNotification.payload(change))])
    }

    /// Listens while `watching` (from the first call that watches; stops on the first that does not), and
    /// returns what other daemons changed since the last call: `.unknown` when listening has just started or the
    /// connection was reset meanwhile (notifications of that time are lost).
    func externalChanges(watching: Bool) throws -> ExternalChanges {
        try database.withReconnect(.idempotent) { () throws(TokenStoreError) -> ExternalChanges in
            guard watching else {
                try database.listen(nil)
                listening = false
                return .none
            }
            let starting = !listening
            try database.listen(LoginNotification.channel)
            listening = true
            guard let payloads = try database.notifications(), !starting else { return .unknown }
            let changes = Set(payloads.map(LoginNotification.change))
            return changes.isEmpty ? .none : .some(changes)
        }
    }

    func selectedProvider(_ key: LoginKey) throws -> String? {
        try rows(
            "SELECT mvpd FROM selected_providers WHERE backend = $1 AND statement_sha256 = $2 AND device_id = $3 AND requestor = $4",
            SQLiteStore.values(key)
        ).first?.first?.text
    }

    func authorizationExpiry(_ key: ProfileKey, resource: String) throws -> Int64? {
        try rows(
            """
            SELECT not_after_ms FROM authorization_expiries
            WHERE backend = $1 AND statement_sha256 = $2 AND device_id = $3 AND requestor = $4 AND mvpd = $5 AND resource = $6
            """, SQLiteStore.values(key) + [.text(resource)]
        ).first?.first?.integer
    }

    /// Key bytes under which an authorization expiry's row surely fits in its primary key's index (a B-tree row holds
    /// at most 2704 bytes, headers included; a longer key may still fit once PostgreSQL has compressed it).
    static let surelyIndexedKeyBytes = 2_600

    /// Committed without waiting for its WAL flush, in one transaction; upserts and deletes by key, so idempotent.
    /// An expiry whose key may be too long for the index (a long MRSS resource) is written in a savepoint of its
    /// own, and left out when the server refuses it ("index row size … exceeds btree version 4 maximum 2704"):
    /// before, it failed the whole transaction and the other rows with it, each time they were tried.
    func writeCache(expiries: [ExpiryKey: Int64], selections: [LoginKey: String?]) throws -> Set<ExpiryKey> {
        try database.withReconnect(.idempotent) { () throws(TokenStoreError) -> Set<ExpiryKey> in
            var leftOut = Set<ExpiryKey>()
            try database.transaction { () throws(TokenStoreError) in
                try database.execute("SET LOCAL synchronous_commit = off")
                for (key, notAfter) in expiries {
                    let upsert = { [database] () throws(TokenStoreError) in
                        try database.execute(
                            """
                            INSERT INTO authorization_expiries(backend, statement_sha256, device_id, requestor, mvpd, resource, not_after_ms)
                            SELECT $1, $2, $3, $4, $5, $6, $7 WHERE EXISTS (SELECT 1 FROM profiles
                                WHERE backend = $1 AND statement_sha256 = $2 AND device_id = $3 AND requestor = $4 AND mvpd = $5)
                            ON CONFLICT (backend, statement_sha256, device_id, requestor, mvpd, resource) DO UPDATE SET not_after_ms = excluded.not_after_ms
                            """, SQLiteStore.values(key.profile) + [.text(key.resource), .integer(notAfter)])
                    }
                    guard Self.keyBytes(key) > Self.surelyIndexedKeyBytes else {
                        try upsert()
                        continue
                    }
                    try database.execute("SAVEPOINT long_key")
                    do throws(TokenStoreError) {
                        try upsert()
                    } catch {
                        if database.socket == nil { throw error }
                        try database.execute("ROLLBACK TO SAVEPOINT long_key")
                        leftOut.insert(key)
                    }
                    try database.execute("RELEASE SAVEPOINT long_key")
                }
                for (key, mvpd) in selections {
                    if let mvpd {
                        try database.execute(
                            """
                            INSERT INTO selected_providers(backend, statement_sha256, device_id, requestor, mvpd) VALUES ($1, $2, $3, $4, $5)
                            ON CONFLICT (backend, statement_sha256, device_id, requestor) DO UPDATE SET mvpd = excluded.mvpd
                            """, SQLiteStore.values(key) + [.text(mvpd)])
                    } else {
                        try database.execute(
                            "DELETE FROM selected_providers WHERE backend = $1 AND statement_sha256 = $2 AND device_id = $3 AND requestor = $4",
                            SQLiteStore.values(key))
                    }
                }
            }
            return leftOut
        }
    }

    /// The bytes of an expiry's key columns.
    static func keyBytes(_ key: ExpiryKey) -> Int {
        let login = key.profile.login
        return [login.scope.backend, login.scope.statementSHA256, login.device, login.requestor, key.profile.mvpd, key.resource]
            .reduce(0) { $0 + $1.utf8.count }
    }

    /// The connection's socket while it listens and is up: notifications arrive on it.
    var notificationSocket: Int32? { listening ? database.socket : nil }

    var changesWaiting: Bool { listening && database.notificationsWaiting }

    var connectionLost: Bool { database.socket == nil }

    func allProfiles() throws -> [(ProfileKey, StoredProfile)] {
        try rows(
            "SELECT backend, statement_sha256, device_id, requestor, mvpd, profile, not_after_ms FROM profiles ORDER BY backend, requestor, mvpd, device_id",
            []
        ).map { row in
            let scope = StoreScope(backend: row[0].text ?? "", statementSHA256: row[1].text ?? "")
            let key = ProfileKey(
                login: LoginKey(scope: scope, device: row[2].text ?? "", requestor: row[3].text ?? ""), mvpd: row[4].text ?? "")
            return (key, StoredProfile(json: row[5].text ?? "", notAfter: row[6].integer))
        }
    }

    func reset(_ selection: LoginSelection) throws -> Int {
        let (condition, arguments) = selection.condition { "$\($0)" }
        return try database.withReconnect(.untilCommitSent) { () throws(TokenStoreError) -> Int in
            try database.transaction { () throws(TokenStoreError) -> Int in
                let deleted = try database.query("DELETE FROM profiles" + condition + " RETURNING 1", arguments).count
                try database.execute("DELETE FROM selected_providers" + condition, arguments)
                try database.execute("DELETE FROM authorization_expiries" + condition, arguments)
                try notify(selection.change)
                return deleted
            }
        }
    }

    /// A write that may be lost in a crash of the server: committed without waiting for its WAL flush. An upsert
    /// of given values, so idempotent.
    private func cacheWrite(_ sql: String, _ arguments: [SQLValue], _ operation: String = #function) throws(TokenStoreError) {
        try database.withReconnect(.idempotent, operation) { () throws(TokenStoreError) in
            try database.transaction { () throws(TokenStoreError) in
                try database.execute("SET LOCAL synchronous_commit = off")
                try database.execute(sql, arguments)
            }
        }
    }
}

/// The fleet's notifications of login changes: channel `passbridge_logins`, payload one `LoginChange` as ASCII
/// (`L` and the login's backend, statement hash, device and requestor, each as hex of its UTF-8, separated by
/// `.`; `R` and a requestor likewise; `*` for everything). A payload that would pass PostgreSQL's 8,000-byte limit
/// is sent as its requestor's, and one that cannot be read counts as everything: a watcher then reads more than
/// it needs, never less.
enum LoginNotification {
    static let channel = "passbridge_logins"

    static func payload(_ change: LoginChange) -> String {
        switch change {
        case .login(let key):
            let text = "L" + [key.scope.backend, key.scope.statementSHA256, key.device, key.requestor].map(hex).joined(separator: ".")
            return text.utf8.count < 8000 ? text : payload(.requestor(key.requestor))
        case .requestor(let requestor):
            let text = "R" + hex(requestor)
            return text.utf8.count < 8000 ? text : "*"
        case .everything:
            return "*"
        }
    }

    static func change(_ payload: String) -> LoginChange {
        let fields = payload.dropFirst().split(separator: ".", omittingEmptySubsequences: false).map { unhex(String($0)) }
        switch payload.first {
        case "L" where fields.count == 4:
            if let backend = fields[0], let hash = fields[1], let device = fields[2], let requestor = fields[3] {
                return .login(LoginKey(scope: StoreScope(backend: backend, statementSHA256: hash), device: device, requestor: requestor))
            }
        case "R" where fields.count == 1:
            if let requestor = fields[0] { return .requestor(requestor) }
        default:
            break
        }
        return .everything
    }

    private static func hex(_ text: String) -> String {
        text.utf8.map { byte in String(byte, radix: 16).count == 1 ? "0" + String(byte, radix: 16) : String(byte, radix: 16) }.joined()
    }

    private static func unhex(_ text: String) -> String? {
        guard text.utf8.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
