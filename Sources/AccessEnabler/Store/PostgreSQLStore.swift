import FoundationEssentials
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

    /// `log` receives the reconnects (``PostgreSQLDatabase``).
    init(url: String, log: (@Sendable (EngineLogLevel, String) -> Void)? = nil) throws(TokenStoreError) {
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

    private func migrate() throws(TokenStoreError) {
        try database.transaction { () throws(TokenStoreError) in
            try database.execute("SELECT pg_advisory_xact_lock(7215870355)")
            try database.execute("CREATE TABLE IF NOT EXISTS passbridge_migrations (version bigint PRIMARY KEY)")
            let applied = try database.query("SELECT coalesce(max(version), 0) FROM passbridge_migrations", [])
            let version = Int(applied.first?.first?.integer ?? 0)
            if version > Self.migrations.count { throw .newerSchema(Int32(version)) }
            for number in version..<Self.migrations.count {
                for statement in Self.migrations[number] { try database.execute(statement) }
                try database.execute("INSERT INTO passbridge_migrations(version) VALUES ($1)", [.integer(Int64(number + 1))])
            }
        }
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

    func saveProfile(_ profile: StoredProfile, _ key: ProfileKey) throws {
        _ = try rows(
            """
            INSERT INTO profiles(backend, statement_sha256, device_id, requestor, mvpd, not_after_ms, profile) VALUES ($1, $2, $3, $4, $5, $6, $7)
            ON CONFLICT (backend, statement_sha256, device_id, requestor, mvpd)
            DO UPDATE SET not_after_ms = excluded.not_after_ms, profile = excluded.profile
            """, SQLiteStore.values(key) + [.integer(profile.notAfter), .text(profile.json)])
    }

    func deleteProfile(_ key: ProfileKey) throws {
        let condition = "backend = $1 AND statement_sha256 = $2 AND device_id = $3 AND requestor = $4 AND mvpd = $5"
        try database.withReconnect(.idempotent) { () throws(TokenStoreError) in
            try database.transaction { () throws(TokenStoreError) in
                try database.execute("DELETE FROM profiles WHERE " + condition, SQLiteStore.values(key))
                try database.execute("DELETE FROM authorization_expiries WHERE " + condition, SQLiteStore.values(key))
            }
        }
    }

    func selectedProvider(_ key: LoginKey) throws -> String? {
        try rows(
            "SELECT mvpd FROM selected_providers WHERE backend = $1 AND statement_sha256 = $2 AND device_id = $3 AND requestor = $4",
            SQLiteStore.values(key)
        ).first?.first?.text
    }

    func setSelectedProvider(_ mvpd: String?, _ key: LoginKey) throws {
        if let mvpd {
            _ = try rows(
                """
                INSERT INTO selected_providers(backend, statement_sha256, device_id, requestor, mvpd) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (backend, statement_sha256, device_id, requestor) DO UPDATE SET mvpd = excluded.mvpd
                """, SQLiteStore.values(key) + [.text(mvpd)])
        } else {
            _ = try rows(
                "DELETE FROM selected_providers WHERE backend = $1 AND statement_sha256 = $2 AND device_id = $3 AND requestor = $4",
                SQLiteStore.values(key))
        }
    }

    func authorizationExpiry(_ key: ProfileKey, resource: String) throws -> Int64? {
        try rows(
            """
            SELECT not_after_ms FROM authorization_expiries
            WHERE backend = $1 AND statement_sha256 = $2 AND device_id = $3 AND requestor = $4 AND mvpd = $5 AND resource = $6
            """, SQLiteStore.values(key) + [.text(resource)]
        ).first?.first?.integer
    }

    func setAuthorizationExpiry(_ notAfter: Int64, _ key: ProfileKey, resource: String) throws {
        try cacheWrite(
            """
            INSERT INTO authorization_expiries(backend, statement_sha256, device_id, requestor, mvpd, resource, not_after_ms)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            ON CONFLICT (backend, statement_sha256, device_id, requestor, mvpd, resource) DO UPDATE SET not_after_ms = excluded.not_after_ms
            """, SQLiteStore.values(key) + [.text(resource), .integer(notAfter)])
    }

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

    func reset(requestor: String?) throws -> Int {
        let condition = requestor == nil ? "" : " WHERE requestor = $1"
        let arguments: [SQLValue] = requestor.map { [.text($0)] } ?? []
        return try database.withReconnect(.untilCommitSent) { () throws(TokenStoreError) -> Int in
            try database.transaction { () throws(TokenStoreError) -> Int in
                let deleted = try database.query("DELETE FROM profiles" + condition + " RETURNING 1", arguments).count
                try database.execute("DELETE FROM selected_providers" + condition, arguments)
                try database.execute("DELETE FROM authorization_expiries" + condition, arguments)
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
