import CSQLite
import Foundation
import Synchronization

/// The persistent state every AccessEnabler instance on a device shares (DESIGN §1, §4; issue 4 item 6).
///
/// One SQLite file `passbridge.sqlite` (mode 0600) in `directory` (created or tightened to 0700), WAL journal,
/// schema version in `PRAGMA user_version`, a busy timeout so several instances and processes can share it.
/// Every write is one transaction. Holds DCR credentials and access tokens per (backend URL, software statement),
/// the device id, profiles per (backend, software statement, requestor, MVPD), the selected MVPD,
/// preauthorization and authorization-expiry caches. Values never reach a log.
public final class TokenStore: Sendable {
    /// The schema this build writes.
    static let schemaVersion: Int32 = 1

    private let connection: Mutex<Connection>
    /// The database file.
    public let fileURL: URL

    /// Opens (creating when needed) the store in `directory`.
    /// - Throws: `TokenStoreError` when the directory or database cannot be opened or has a newer schema.
    public init(directory: URL) throws {
        let path = directory.path
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        if !manager.fileExists(atPath: path, isDirectory: &isDirectory) {
            try manager.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } else if !isDirectory.boolValue {
            throw TokenStoreError.notADirectory(path)
        }
        if chmod(path, 0o700) != 0 { throw TokenStoreError.io("cannot chmod state directory", errno) }
        fileURL = directory.appendingPathComponent("passbridge.sqlite")
        let previous = umask(0o077)
        defer { umask(previous) }
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX
        guard sqlite3_open_v2(fileURL.path, &handle, flags, nil) == SQLITE_OK, let handle else {
            sqlite3_close(handle)
            throw TokenStoreError.sqlite("open", SQLITE_CANTOPEN)
        }
        chmod(fileURL.path, 0o600)
        let connection = Connection(handle: handle)
        try connection.configure()
        self.connection = Mutex(connection)
    }

    deinit { connection.withLock { _ = sqlite3_close_v2($0.handle) } }

    // MARK: key-value access (all values are UTF-8 text)

    func value(_ namespace: Namespace, _ key: String) -> String? {
        connection.withLock { try? $0.select(namespace.rawValue, key) } ?? nil
    }

    func values(_ namespace: Namespace, prefix: String) -> [(key: String, value: String)] {
        connection.withLock { (try? $0.selectPrefix(namespace.rawValue, prefix)) ?? [] }
    }

    @discardableResult
    func set(_ namespace: Namespace, _ key: String, _ value: String?) -> Bool {
        connection.withLock { (try? $0.write(namespace.rawValue, key, value)) != nil }
    }

    /// Deletes every key of `namespace` starting with `prefix`, in one transaction.
    func removeAll(_ namespace: Namespace, prefix: String) {
        connection.withLock { _ = try? $0.deletePrefix(namespace.rawValue, prefix) }
    }

    /// Deletes the value only while it still equals `expected` (another process may have replaced it).
    func remove(_ namespace: Namespace, _ key: String, ifEqualTo expected: String) {
        connection.withLock { _ = try? $0.exec("DELETE FROM kv WHERE ns = ? AND key = ? AND value = ?", [namespace.rawValue, key, expected]) }
    }

    /// Inserts `value` only when no value exists; returns the stored value (for ids shared by processes).
    func setIfAbsent(_ namespace: Namespace, _ key: String, _ value: String) -> String {
        connection.withLock { conn in
            _ = try? conn.exec("INSERT OR IGNORE INTO kv(ns, key, value) VALUES (?, ?, ?)", [namespace.rawValue, key, value])
            return (try? conn.select(namespace.rawValue, key)) ?? nil ?? value
        }
    }

    enum Namespace: String {
        case credentials, device, profile, selected, preauth, authz
    }
}

/// A store failure.
public enum TokenStoreError: Error, Equatable, CustomStringConvertible {
    /// A file system call failed: what was done, and errno.
    case io(String, Int32)
    /// An SQLite call failed: the operation, and SQLite's result code.
    case sqlite(String, Int32)
    /// The database was written by a newer PassBridge (its schema version).
    case newerSchema(Int32)
    /// The state path exists and is not a directory (it is left untouched).
    case notADirectory(String)

    public var description: String {
        switch self {
        case .io(let what, let code): return "\(what): \(String(cString: strerror(code)))"
        case .sqlite(let operation, let code): return "SQLite \(operation) failed: \(String(cString: sqlite3_errstr(code)))"
        case .newerSchema(let version): return "the store has schema version \(version), newer than this PassBridge knows"
        case .notADirectory(let path): return "\(path) is not a directory"
        }
    }
}

/// One SQLite connection; all access under the store's mutex.
struct Connection: ~Copyable {
    let handle: OpaquePointer

    func configure() throws {
        sqlite3_busy_timeout(handle, 5000)
        try exec("PRAGMA journal_mode=WAL", [])
        try exec("PRAGMA synchronous=FULL", [])
        let version = try userVersion()
        if version > TokenStore.schemaVersion { throw TokenStoreError.newerSchema(version) }
        if version < TokenStore.schemaVersion {
            try exec("BEGIN IMMEDIATE", [])
            do {
                try exec("CREATE TABLE IF NOT EXISTS kv (ns TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (ns, key))", [])
                try exec("PRAGMA user_version=\(TokenStore.schemaVersion)", [])
                try exec("COMMIT", [])
            } catch {
                _ = try? exec("ROLLBACK", [])
                throw error
            }
        }
    }

    func userVersion() throws -> Int32 {
        var version: Int32 = 0
        try query("PRAGMA user_version", []) { statement in version = sqlite3_column_int(statement, 0) }
        return version
    }

    func select(_ ns: String, _ key: String) throws -> String? {
        var result: String?
        try query("SELECT value FROM kv WHERE ns = ? AND key = ?", [ns, key]) { result = Self.text($0, 0) }
        return result
    }

    func selectPrefix(_ ns: String, _ prefix: String) throws -> [(key: String, value: String)] {
        var rows: [(key: String, value: String)] = []
        try query("SELECT key, value FROM kv WHERE ns = ? AND substr(key, 1, ?) = ? ORDER BY key", [ns, prefix.utf8.count, prefix]) {
            rows.append((Self.text($0, 0) ?? "", Self.text($0, 1) ?? ""))
        }
        return rows
    }

    func write(_ ns: String, _ key: String, _ value: String?) throws {
        if let value {
            try exec("INSERT INTO kv(ns, key, value) VALUES (?, ?, ?) ON CONFLICT(ns, key) DO UPDATE SET value = excluded.value", [ns, key, value])
        } else {
            try exec("DELETE FROM kv WHERE ns = ? AND key = ?", [ns, key])
        }
    }

    func deletePrefix(_ ns: String, _ prefix: String) throws {
        try exec("DELETE FROM kv WHERE ns = ? AND substr(key, 1, ?) = ?", [ns, prefix.utf8.count, prefix])
    }

    func exec(_ sql: String, _ arguments: [any Sendable]) throws {
        try query(sql, arguments) { _ in }
    }

    /// Runs one statement (its own implicit transaction), calling `row` per result row.
    func query(_ sql: String, _ arguments: [any Sendable], row: (OpaquePointer) -> Void) throws {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw TokenStoreError.sqlite("prepare", sqlite3_errcode(handle))
        }
        defer { sqlite3_finalize(statement) }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (index, argument) in arguments.enumerated() {
            let position = Int32(index + 1)
            if let text = argument as? String {
                sqlite3_bind_text(statement, position, text, -1, transient)
            } else if let number = argument as? Int {
                sqlite3_bind_int64(statement, position, Int64(number))
            }
        }
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_ROW { row(statement); continue }
            if code == SQLITE_DONE { return }
            throw TokenStoreError.sqlite("step", code)
        }
    }

    static func text(_ statement: OpaquePointer, _ column: Int32) -> String? {
        guard let pointer = sqlite3_column_text(statement, column) else { return nil }
        return String(cString: pointer)
    }
}
