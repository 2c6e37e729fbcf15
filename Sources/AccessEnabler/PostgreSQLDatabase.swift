import CPostgreSQL
import FoundationEssentials
import ThreadAffinity

/// One libpq connection. Parameters and results travel in binary: strings as `bytea` (so that any string,
/// U+0000 included, is kept byte for byte), integers as `int8`. Used by one thread: its store worker, once that
/// claims ``thread`` (checked in debug builds).
final class PostgreSQLDatabase {
    private let connection: OpaquePointer
    let thread = ThreadAffinity()

    /// Loads libpq, then connects to `url` (a libpq connection URI).
    init(url: String) throws(TokenStoreError) {
        if let reason = cpq_load() {
            throw .postgreSQL(operation: "load libpq", message: String(cString: reason) + " (Debian package: libpq5)")
        }
        guard let connection = cpq_connectdb(url) else { throw .postgreSQL(operation: "connect", message: "out of memory") }
        self.connection = connection
        // On failure deinit (run once every property is set) closes the connection.
        guard cpq_status(connection) == CONNECTION_OK else { throw .postgreSQL(operation: "connect", message: Self.message(connection)) }
        _ = try? execute("SET client_min_messages = warning")
    }

    deinit { cpq_finish(connection) }

    /// Reconnects when the server went away (a restart, a failover) since the last call.
    func reconnectIfNeeded() {
        if cpq_status(connection) != CONNECTION_OK { cpq_reset(connection) }
    }

    func execute(_ sql: String, _ arguments: [SQLValue] = []) throws(TokenStoreError) {
        _ = try query(sql, arguments)
    }

    /// Runs one statement; the rows, each column as text bytes (`bytea`) or an integer (`int8`), nil for NULL.
    func query(_ sql: String, _ arguments: [SQLValue]) throws(TokenStoreError) -> [[Cell]] {
        thread.check("PostgreSQL connection")
        var buffers: [[UInt8]] = []
        var types: [Oid] = []
        for argument in arguments {
            switch argument {
            case .text(let text):
                buffers.append(Array(text.utf8))
                types.append(17)  // bytea
            case .integer(let number):
                buffers.append(withUnsafeBytes(of: number.bigEndian) { Array($0) })
                types.append(20)  // int8
            case .null:
                buffers.append([])
                types.append(0)
            }
        }
        let lengths = buffers.map { Int32($0.count) }
        let formats = [Int32](repeating: 1, count: buffers.count)
        let result = withPointers(buffers, arguments) { values in
            cpq_execParams(connection, sql, Int32(buffers.count), types, values, lengths, formats, 1)
        }
        guard let result else { throw .postgreSQL(operation: "query", message: Self.message(connection)) }
        defer { cpq_clear(result) }
        let status = cpq_resultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            // The primary message only: the detail may quote the values of a row.
            let primary = cpq_resultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) }
            throw .postgreSQL(operation: "query", message: primary ?? String(cString: cpq_resStatus(status)))
        }
        var rows: [[Cell]] = []
        for row in 0..<cpq_ntuples(result) {
            var cells: [Cell] = []
            for column in 0..<cpq_nfields(result) {
                if cpq_getisnull(result, row, column) == 1 { cells.append(Cell(bytes: nil)); continue }
                let count = Int(cpq_getlength(result, row, column))
                let pointer = cpq_getvalue(result, row, column)!
                cells.append(
                    Cell(
                        bytes: pointer.withMemoryRebound(to: UInt8.self, capacity: count) {
                            Array(UnsafeBufferPointer(start: $0, count: count))
                        }))
            }
            rows.append(cells)
        }
        return rows
    }

    /// Runs `body` in one transaction; rolls back when it throws.
    func transaction<T>(_ body: () throws(TokenStoreError) -> T) throws(TokenStoreError) -> T {
        try execute("BEGIN")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
    }

    /// One result value in binary form.
    struct Cell {
        let bytes: [UInt8]?
        var text: String? { bytes.map { String(decoding: $0, as: UTF8.self) } }
        var integer: Int64 {
            guard let bytes, bytes.count == 8 else { return 0 }
            return bytes.reduce(0) { $0 << 8 | Int64($1) }
        }
    }

    private func withPointers<R>(_ buffers: [[UInt8]], _ arguments: [SQLValue], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        let pointers: [UnsafeMutablePointer<CChar>?] = zip(buffers, arguments).map { buffer, argument in
            if case .null = argument { return nil }
            let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: max(buffer.count, 1))
            buffer.withUnsafeBytes { raw in
                if let base = raw.baseAddress { UnsafeMutableRawPointer(pointer).copyMemory(from: base, byteCount: buffer.count) }
            }
            return pointer
        }
        defer { pointers.forEach { $0?.deallocate() } }
        return body(pointers.map { $0.map { UnsafePointer($0) } })
    }

    private static func message(_ connection: OpaquePointer) -> String {
        String(cString: cpq_errorMessage(connection)).trimmingWhitespace()
    }
}

/// A PostgreSQL URL as it may be shown: without its password.
public enum PostgreSQLURL {
    public static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return "postgresql://…" }
        if components.password != nil { components.password = "***" }
        var items = components.queryItems ?? []
        for index in items.indices where items[index].name == "password" { items[index].value = "***" }
        components.queryItems = items.isEmpty ? nil : items
        return components.string ?? "postgresql://…"
    }
}
