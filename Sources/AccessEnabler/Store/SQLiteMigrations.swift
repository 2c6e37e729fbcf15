import CSQLite
import JSON

/// The embedded store's numbered migrations, applied in order in one transaction each; `PRAGMA user_version`
/// is the number of the last one applied. Never edit a released migration: add the next one.
enum SQLiteMigrations {
    /// The schema this build writes.
    static let latest: Int32 = 3

    /// Applies migration `number`.
    static func apply(_ number: Int32, _ database: SQLiteDatabase) throws(TokenStoreError) {
        switch number {
        case 1: try createKeyValue(database)
        case 2: try createEntityTables(database)
        case 3: try createLoginChanges(database)
        default: throw .newerSchema(number)
        }
    }

    /// Brings the database to `latest`.
    /// - Throws: `TokenStoreError.newerSchema` for a store written by a newer PassBridge.
    static func upgrade(_ database: SQLiteDatabase) throws(TokenStoreError) {
        var version = try userVersion(database)
        if version > latest { throw .newerSchema(version) }
        while version < latest {
            try database.transaction { () throws(TokenStoreError) in
                // Another process may have migrated while this one waited for the lock.
                let current = try userVersion(database)
                guard current == version else { return }
                try apply(version + 1, database)
                try database.execute("PRAGMA user_version=\(version + 1)")
            }
            version = try userVersion(database)
        }
    }

    static func userVersion(_ database: SQLiteDatabase) throws(TokenStoreError) -> Int32 {
        Int32(try database.text("PRAGMA user_version") ?? "0") ?? 0
    }

    /// 1: the first layout, one key-value table (kept so that stores of every age upgrade the same way).
    static func createKeyValue(_ database: SQLiteDatabase) throws(TokenStoreError) {
        try database.execute(
            "CREATE TABLE IF NOT EXISTS kv (ns TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (ns, key))")
    }

    /// 3: a counter every write of a login bumps in its own transaction (`SQLiteStore.externalChanges`), so that a
    /// process learns that another one changed who is logged in, and not only that it wrote something.
    static func createLoginChanges(_ database: SQLiteDatabase) throws(TokenStoreError) {
        try database.execute("CREATE TABLE login_changes (slot INTEGER PRIMARY KEY CHECK (slot = 1), counter INTEGER NOT NULL)")
        try database.execute("INSERT INTO login_changes(slot, counter) VALUES (1, 0)")
    }

    /// 2: one table per entity, with the key-value rows moved in. Preauthorization decisions are dropped (never
    /// persisted) and authorization expiries too (a cache).
    static func createEntityTables(_ database: SQLiteDatabase) throws(TokenStoreError) {
        for statement in entityTables { try database.execute(statement) }
        var rows: [(ns: String, key: String, value: String)] = []
        try database.query("SELECT ns, key, value FROM kv", []) { row in
            rows.append((row.text(0) ?? "", row.text(1) ?? "", row.text(2) ?? ""))
        }
        let device = rows.first { $0.ns == "device" && $0.key == "id" }?.value
        if let device {
            try database.execute("INSERT INTO device_identity(slot, device_id) VALUES (1, ?)", [.text(device)])
        }
        var clients: [String: String] = [:]
        for row in rows where row.ns == "credentials" && !row.key.hasSuffix("|token") {
            guard let scope = LegacyKey.scope(row.key), let json = try? JSON.parse(row.value),
                let id = json["client_id"]?.stringValue, let secret = json["client_secret"]?.stringValue
            else { continue }
            clients[row.key] = id
            try database.execute(
                "INSERT INTO client_credentials(backend, statement_sha256, client_id, client_secret) VALUES (?, ?, ?, ?)",
                SQLiteStore.values(scope) + [.text(id), .text(secret)])
        }
        for row in rows where row.ns == "credentials" && row.key.hasSuffix("|token") {
            let scopeKey = String(row.key.dropLast("|token".count))
            guard let scope = LegacyKey.scope(scopeKey), let client = clients[scopeKey], let json = try? JSON.parse(row.value),
                let token = json["access_token"]?.stringValue, let expires = json["expires"]?.int64Value
            else { continue }
            try database.execute(
                "INSERT INTO access_tokens(backend, statement_sha256, client_id, token, expires_ms, refreshing_until_ms) VALUES (?, ?, ?, ?, ?, 0)",
                SQLiteStore.values(scope) + [.text(client), .text(token), .integer(expires)])
        }
        guard let device else { return try database.execute("DROP TABLE kv") }
        for row in rows where row.ns == "profile" {
            guard let (scope, rest) = LegacyKey.split(row.key), let bar = rest.lastIndex(of: "|"),
                let json = try? JSON.parse(row.value)
            else { continue }
            let key = ProfileKey(
                login: LoginKey(scope: scope, device: device, requestor: String(rest[..<bar])),
                mvpd: String(rest[rest.index(after: bar)...]))
            try database.execute(
                "INSERT INTO profiles(backend, statement_sha256, device_id, requestor, mvpd, not_after_ms, profile) VALUES (?, ?, ?, ?, ?, ?, ?)",
                SQLiteStore.values(key) + [.integer(json["notAfter"]?.int64Value ?? 0), .text(row.value)])
        }
        for row in rows where row.ns == "selected" {
            guard let (scope, requestor) = LegacyKey.split(row.key) else { continue }
            try database.execute(
                "INSERT INTO selected_providers(backend, statement_sha256, device_id, requestor, mvpd) VALUES (?, ?, ?, ?, ?)",
                SQLiteStore.values(LoginKey(scope: scope, device: device, requestor: requestor)) + [.text(row.value)])
        }
        try database.execute("DROP TABLE kv")
    }

    static let entityTables = [
        "CREATE TABLE device_identity (slot INTEGER PRIMARY KEY CHECK (slot = 1), device_id TEXT NOT NULL)",
        """
        CREATE TABLE client_credentials (backend TEXT NOT NULL, statement_sha256 TEXT NOT NULL, client_id TEXT NOT NULL,
        client_secret TEXT NOT NULL, PRIMARY KEY (backend, statement_sha256))
        """,
        """
        CREATE TABLE access_tokens (backend TEXT NOT NULL, statement_sha256 TEXT NOT NULL, client_id TEXT NOT NULL, token TEXT NOT NULL,
        expires_ms INTEGER NOT NULL, refreshing_until_ms INTEGER NOT NULL, PRIMARY KEY (backend, statement_sha256))
        """,
        """
        CREATE TABLE profiles (backend TEXT NOT NULL, statement_sha256 TEXT NOT NULL, device_id TEXT NOT NULL, requestor TEXT NOT NULL,
        mvpd TEXT NOT NULL, not_after_ms INTEGER NOT NULL, profile TEXT NOT NULL,
        PRIMARY KEY (backend, statement_sha256, device_id, requestor, mvpd))
        """,
        """
        CREATE TABLE selected_providers (backend TEXT NOT NULL, statement_sha256 TEXT NOT NULL, device_id TEXT NOT NULL,
        requestor TEXT NOT NULL, mvpd TEXT NOT NULL, PRIMARY KEY (backend, statement_sha256, device_id, requestor))
        """,
        """
        CREATE TABLE authorization_expiries (backend TEXT NOT NULL, statement_sha256 TEXT NOT NULL, device_id TEXT NOT NULL,
        requestor TEXT NOT NULL, mvpd TEXT NOT NULL, resource TEXT NOT NULL, not_after_ms INTEGER NOT NULL,
        PRIMARY KEY (backend, statement_sha256, device_id, requestor, mvpd, resource))
        """,
    ]
}

/// The keys of the key-value layout: `backend|sha256(statement)` for credentials, followed by `|requestor`
/// (selection) or `|requestor|mvpd` (profile).
enum LegacyKey {
    static func scope(_ key: String) -> StoreScope? {
        guard let (scope, rest) = split(key), rest.isEmpty else { return nil }
        return scope
    }

    /// The scope at the head of `key` and what follows it (without its separator).
    static func split(_ key: String) -> (StoreScope, String)? {
        guard let first = key.firstIndex(of: "|") else { return nil }
        let afterBackend = key[key.index(after: first)...]
        let hash = afterBackend.prefix(64)
        guard hash.count == 64 else { return nil }
        let rest = afterBackend.dropFirst(64)
        let scope = StoreScope(backend: String(key[..<first]), statementSHA256: String(hash))
        if rest.isEmpty { return (scope, "") }
        guard rest.first == "|" else { return nil }
        return (scope, String(rest.dropFirst()))
    }
}
