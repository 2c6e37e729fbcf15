import CSQLite
import Glibc
import ThreadAffinity

/// A value bound to a statement parameter: text (bound with its byte length, so U+0000 survives), an integer,
/// or SQL NULL.
enum SQLValue: Sendable {
    case text(String)
    case integer(Int64)
    case null
}

/// One SQLite connection: statements prepared once and kept, bound and read byte for byte. Used by one thread:
/// its store worker, once that claims ``thread`` (checked in debug builds).
final class SQLiteDatabase {
    let handle: OpaquePointer
    let thread = ThreadAffinity()
    private let busyTimeoutMillis: Int32
    private var statements: [String: OpaquePointer] = [:]

    /// Loads SQLite (the first time), then opens (creating) `path` with the file created 0600; a symbolic link at
    /// `path` is refused.
    init(path: String, busyTimeoutMillis: Int32) throws(TokenStoreError) {
        if let reason = csq_load() { throw .sqliteLibrary(String(cString: reason)) }
        let previous = umask(0o077)
        defer { umask(previous) }
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let code = csq_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            csq_close(handle)
            throw .sqlite(operation: "open \(path)", code: code)
        }
        self.handle = handle
        self.busyTimeoutMillis = busyTimeoutMillis
        csq_busy_timeout(handle, busyTimeoutMillis)
        csq_extended_result_codes(handle, 1)
    }

    deinit {
        for statement in statements.values { csq_finalize(statement) }
        csq_close_v2(handle)
    }

    /// Runs `body` waiting at most `millis` (ms; never longer than the connection's own busy timeout) for another
    /// connection's lock, instead of the connection's busy timeout.
    func waitingForLocks<T>(atMost millis: Int32, _ body: () throws(TokenStoreError) -> T) throws(TokenStoreError) -> T {
        csq_busy_timeout(handle, min(millis, busyTimeoutMillis))
        defer { csq_busy_timeout(handle, busyTimeoutMillis) }
        return try body()
    }

    func execute(_ sql: String, _ arguments: [SQLValue] = []) throws(TokenStoreError) {
        try query(sql, arguments) { _ in }
    }

    /// Runs one statement, calling `row` per result row.
    func query(_ sql: String, _ arguments: [SQLValue], row: (Row) -> Void) throws(TokenStoreError) {
        thread.check("SQLite connection")
        let statement = try prepare(sql)
        defer {
            csq_reset(statement)
            csq_clear_bindings(statement)
        }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (index, argument) in arguments.enumerated() {
            let position = Int32(index + 1)
            switch argument {
            case .text(let text):
                let bytes = Array(text.utf8)
                _ = bytes.withUnsafeBufferPointer { buffer in
                    // A non-nil pointer even for "", so that the empty string is not bound as NULL.
                    buffer.baseAddress.map { pointer in
                        pointer.withMemoryRebound(to: CChar.self, capacity: max(buffer.count, 1)) {
                            csq_bind_text(statement, position, $0, Int32(buffer.count), transient)
                        }
                    } ?? csq_bind_text(statement, position, "", 0, transient)
                }
            case .integer(let number):
                csq_bind_int64(statement, position, number)
            case .null:
                csq_bind_null(statement, position)
            }
        }
        while true {
            let code = csq_step(statement)
            if code == SQLITE_ROW { row(Row(statement: statement)); continue }
            if code == SQLITE_DONE { return }
            throw .sqlite(operation: "step", code: code)
        }
    }

    /// The statement for `sql`, prepared on first use.
    private func prepare(_ sql: String) throws(TokenStoreError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        let prepared = csq_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard prepared == SQLITE_OK, let statement else { throw .sqlite(operation: "prepare", code: prepared) }
        statements[sql] = statement
        return statement
    }

    /// The first column of the first row as text.
    func text(_ sql: String, _ arguments: [SQLValue] = []) throws(TokenStoreError) -> String? {
        var result: String?
        try query(sql, arguments) { row in if result == nil { result = row.text(0) } }
        return result
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction (the write lock is taken first, so reads inside see
    /// what the write will change); rolls back when it throws.
    func transaction<T>(_ body: () throws(TokenStoreError) -> T) throws(TokenStoreError) -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
    }

    /// Rows changed by the last statement.
    var changes: Int { Int(csq_changes(handle)) }

    /// One result row.
    struct Row {
        let statement: OpaquePointer

        /// Column `index` as text, byte for byte (nil for NULL).
        func text(_ index: Int32) -> String? {
            guard csq_column_type(statement, index) != SQLITE_NULL else { return nil }
            guard let pointer = csq_column_text(statement, index) else { return "" }
            let count = Int(csq_column_bytes(statement, index))
            return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
        }

        func integer(_ index: Int32) -> Int64 { csq_column_int64(statement, index) }
    }
}
