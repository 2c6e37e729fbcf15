import CPostgreSQL
import Glibc
import ThreadAffinity

/// One libpq connection. Parameters and results travel in binary: strings as `bytea` (so that any string,
/// U+0000 included, is kept byte for byte), integers as `int8`. Used by one thread: its store worker, once that
/// claims ``thread`` (checked in debug builds).
///
/// A connection the server closed (a restart, a failover, `pg_terminate_backend`) is noticed only when a statement
/// fails on it: libpq keeps reporting `CONNECTION_OK` until then. ``withReconnect(_:_:_:)`` reconnects and runs the
/// operation again, once, when that is safe (``Replay``).
final class PostgreSQLDatabase {
    private let connection: OpaquePointer
    private let log: EngineLog?
    let thread = ThreadAffinity()
    /// A statement failed because the connection is gone; the next operation reconnects first.
    private var lost = false
    /// The last statement got no answer within ``answerTimeoutMillis``: the connection is lost, and the operation is
    /// not run again (a server that does not answer would hold it as long once more).
    private var abandoned = false
    /// Inside ``transaction(_:)``, after its BEGIN was sent.
    private var inTransaction = false
    /// The current attempt sent something that may have committed: a COMMIT, or a statement outside a transaction.
    private var mayHaveCommitted = false
    /// The channel this session listens on (`listen(_:)`), again after each reconnect.
    private var channel: String?
    /// A reconnect happened since `notifications()` last ran: notifications sent meanwhile are lost.
    private var reconnectedSinceNotifications = false
    /// Other sessions' payloads that libpq had already read (with a query's answer), for `notifications()`.
    private var taken: [String] = []

    /// Loads libpq, then connects to `url` (a libpq connection URI). `log` receives the reconnects.
    init(url: String, log: EngineLog? = nil) throws(TokenStoreError) {
        if let reason = cpq_load() {
            throw .postgreSQL(operation: "load libpq", message: String(cString: reason) + " (Debian package: libpq5)")
        }
        let withTimeout = PostgreSQLURL.withConnectTimeout(url, environment: getenv("PGCONNECT_TIMEOUT").map { String(cString: $0) })
        guard let connection = cpq_connectdb(withTimeout) else { throw .postgreSQL(operation: "connect", message: "out of memory") }
        self.connection = connection
        self.log = log
        // libpq would write these on stderr as bare lines; they are the store's log lines instead. `self` outlives
        // the callback: deinit ends the connection.
        cpq_setNoticeProcessor(
            connection,
            { database, message in
                guard let database, let message else { return }
                Unmanaged<PostgreSQLDatabase>.fromOpaque(database).takeUnretainedValue().serverSaid(String(cString: message))
            }, Unmanaged.passUnretained(self).toOpaque())
        // On failure deinit (run once every property is set) closes the connection.
        guard cpq_status(connection) == CONNECTION_OK else {
            throw .postgreSQL(operation: "connect", message: PostgreSQLURL.scrubbed(Self.message(connection), of: url))
        }
        prepareSession()
    }

    deinit { cpq_finish(connection) }

    /// How long one statement may run or wait for a lock, in ms: `TokenStore.defaultBusyTimeout`, as for SQLite.
    static let statementTimeoutMillis = TokenStore.defaultBusyTimeout.components.seconds * 1000

    /// How long the daemon waits for the answer to one statement, in ms: twice the statement timeout, so that only
    /// a server that stops answering (a hung host, a network that drops everything) meets it (Protocol/README.md,
    /// "The store").
    static let answerTimeoutMillis = 2 * statementTimeoutMillis

    /// A message of the server outside an answer (`client_min_messages` keeps them to WARNING and worse), such as the
    /// FATAL of a connection it ends at a restart: logged as a warning, on one line.
    private func serverSaid(_ message: String) {
        let words = message.split(whereSeparator: { $0 == " " || $0.isNewline })
        log?(.warning, "PostgreSQL server: " + words.joined(separator: " "))
    }

    /// How an operation may be run again after the connection was lost in its middle.
    enum Replay {
        /// Running it twice leaves the same rows and gives the same answer as running it once (a read, an insert
        /// that does nothing on conflict, an upsert of given values, a delete by key): always run again.
        case idempotent
        /// Run again only when its COMMIT was never sent, so that the server rolled it back; when the connection
        /// was lost with the COMMIT in flight it may have committed, and the failure is thrown.
        case untilCommitSent
    }

    /// Runs `body`, one store operation; when it fails because the connection was lost, reconnects (`PQreset`)
    /// and runs it once more if `replay` allows. A connection already known lost is reset before `body` runs.
    /// A reconnect that fails (the server is down) throws at once: no waiting, no second attempt.
    /// - Throws: `body`'s error, or `.postgreSQL(operation: "connect", …)` when the reconnect failed.
    func withReconnect<T>(
        _ replay: Replay, _ operation: String = #function, _ body: () throws(TokenStoreError) -> T
    ) throws(TokenStoreError) -> T {
        thread.check("PostgreSQL connection")
        let operation = operation.prefix { $0 != "(" }  // a method's name, without its labels
        if lost || cpq_status(connection) != CONNECTION_OK {
            let why = abandoned ? "dropped earlier, the server having given no answer" : "lost earlier"
            try reconnect()
            log?(.warning, "PostgreSQL connection \(why); reconnected before \(operation)")
        }
        mayHaveCommitted = false
        do {
            return try body()
        } catch {
            guard lost, !abandoned else { throw error }
            guard replay == .idempotent || !mayHaveCommitted else { throw error }
            try reconnect()
            log?(.warning, "PostgreSQL connection lost during \(operation) (\(error)); reconnected, running it again")
            mayHaveCommitted = false
            return try body()
        }
    }

    /// Resets the connection; throws libpq's reason when the server cannot be reached.
    private func reconnect() throws(TokenStoreError) {
        cpq_reset(connection)
        guard cpq_status(connection) == CONNECTION_OK else { throw .postgreSQL(operation: "connect", message: Self.message(connection)) }
        lost = false
        abandoned = false
        prepareSession()
    }

    /// The session's settings, again after each reconnect (a new session starts with the server's defaults).
    private func prepareSession() {
        _ = try? execute("SET client_min_messages = warning")
        // A statement held longer (a lock another session keeps) fails, as SQLite's busy timeout makes a write fail:
        // the call ends with STORE500 instead of waiting for as long as the lock is kept.
        _ = try? execute("SET statement_timeout = \(Self.statementTimeoutMillis)")
        if let channel {
            _ = try? execute("LISTEN \(channel)")
            reconnectedSinceNotifications = true
        }
    }

    /// Listens on `channel` (an SQL identifier of ours), or stops listening (nil); kept across reconnects.
    func listen(_ channel: String?) throws(TokenStoreError) {
        guard channel != self.channel else { return }
        if let current = self.channel { try execute("UNLISTEN \(current)") }
        if let channel { try execute("LISTEN \(channel)") }
        self.channel = channel
    }

    /// What other sessions sent on the channel since the last call (their payloads; this session's own are left
    /// out), or nil when notifications may have been lost: the connection was reset since the last call. Reads
    /// what the server has sent without waiting for more.
    /// - Throws: `.postgreSQL` when the connection is gone (the next operation reconnects).
    func notifications() throws(TokenStoreError) -> [String]? {
        thread.check("PostgreSQL connection")
        if lost || cpq_status(connection) != CONNECTION_OK { try reconnect() }
        if cpq_consumeInput(connection) == 0 {
            lost = cpq_status(connection) == CONNECTION_BAD
            throw .postgreSQL(operation: "read notifications", message: Self.message(connection))
        }
        takeNotifications()
        defer {
            reconnectedSinceNotifications = false
            taken = []
        }
        return reconnectedSinceNotifications ? nil : taken
    }

    /// Whether `notifications()` has something to tell that the socket no longer shows: payloads libpq read in
    /// with an answer, or a reconnect since its last call. Reads nothing from the socket.
    var notificationsWaiting: Bool {
        thread.check("PostgreSQL connection")
        takeNotifications()
        return !taken.isEmpty || reconnectedSinceNotifications
    }

    /// Moves what libpq has queued into `taken`, but this session's own.
    private func takeNotifications() {
        let own = cpq_backendPID(connection)
        while let notification = cpq_notifies(connection) {
            if notification.pointee.be_pid != own, let extra = notification.pointee.extra {
                taken.append(String(cString: extra))
            }
            cpq_freemem(notification)
        }
    }

    /// The connection's socket, for a wait until the server sends something (a notification); nil while the
    /// connection is lost.
    var socket: Int32? {
        guard !lost, cpq_status(connection) == CONNECTION_OK else { return nil }
        let fd = cpq_socket(connection)
        return fd >= 0 ? fd : nil
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
        if !inTransaction { mayHaveCommitted = true }
        var timedOut: Int32 = 0
        let result = withPointers(buffers, arguments) { values in
            cpq_execParamsWithin(
                connection, Int32(Self.answerTimeoutMillis), &timedOut, sql, Int32(buffers.count), types, values, lengths, formats, 1)
        }
        guard let result else {
            if timedOut != 0 {
                // The statement is still in flight: the connection can serve nothing else until it is reset. Logged
                // here, since a caller that tries again later (a cache write, the look) logs nothing of its own.
                (lost, abandoned) = (true, true)
                let message = "no answer from the server within \(Self.answerTimeoutMillis / 1000) s"
                log?(.warning, "PostgreSQL: \(message); the connection is dropped, and the next operation connects anew")
                throw .postgreSQL(operation: "query", message: message)
            }
            lost = cpq_status(connection) == CONNECTION_BAD
            throw .postgreSQL(operation: "query", message: Self.message(connection))
        }
        defer { cpq_clear(result) }
        let status = cpq_resultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let code = cpq_resultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            lost = cpq_status(connection) == CONNECTION_BAD || code.map(Self.meansConnectionLost) == true
            // The primary message only: the detail may quote the values of a row. A failure libpq made itself
            // (the server closed the connection) has no fields: then libpq's message says what happened.
            let primary = cpq_resultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) }
            let message = primary ?? Self.message(connection)
            throw .postgreSQL(operation: "query", message: message.isEmpty ? String(cString: cpq_resStatus(status)) : message)
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

    /// Runs `body` in one transaction; rolls back when it throws (a lost connection has rolled it back already).
    func transaction<T>(_ body: () throws(TokenStoreError) -> T) throws(TokenStoreError) -> T {
        inTransaction = true
        defer { inTransaction = false }
        try execute("BEGIN")
        do {
            let value = try body()
            mayHaveCommitted = true
            try execute("COMMIT")
            return value
        } catch {
            if !lost { _ = try? execute("ROLLBACK") }
            throw error
        }
    }

    /// SQLSTATEs of a session the server ended or never accepted (the PostgreSQL manual's "PostgreSQL Error
    /// Codes"): class 08 connection exception, 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03
    /// cannot_connect_now.
    private static func meansConnectionLost(_ code: String) -> Bool {
        code.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(code)
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

    /// libpq's last message on one line (it may span several, indented with tabs).
    private static func message(_ connection: OpaquePointer) -> String {
        String(cString: cpq_errorMessage(connection)).split(whereSeparator: \.isNewline).map { $0.trimmingWhitespace() }
            .filter { !$0.isEmpty }.joined(separator: " ")
    }
}

/// A PostgreSQL URL as it may be shown: without its password.
public enum PostgreSQLURL {
    /// The libpq parameters whose values are secrets.
    private static let secretParameters: Set = ["password", "sslpassword"]

    /// `url` with the userinfo's password and the value of each `password` or `sslpassword` query parameter (its
    /// name percent-encoded or not) replaced by `***`;
    /// `postgresql://…` when it is not an `AbsoluteURL`.
    public static func redacted(_ url: String) -> String {
        // The userinfo as libpq reads it: up to the first `@` met before any `/`, so that a `?` or `#` in a password
        // (`u:1234567?x@host`, which RFC 3986 reads as host `u`, port 1234567) stays in the password.
        var userinfo: Substring?
        var rest = url
        if let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") {
            let start = url.index(colon, offsetBy: 3)
            if let stop = url[start...].firstIndex(where: { $0 == "@" || $0 == "/" }), url[stop] == "@" {
                userinfo = url[start..<stop]
                rest = String(url[..<start] + url[url.index(after: stop)...])
            }
        }
        guard let parts = AbsoluteURL(rest) else { return "postgresql://…" }
        var text = parts.scheme + "://"
        if let userinfo {
            let fields = userinfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            text += fields[0] + (fields.count > 1 ? ":***" : "") + "@"
        }
        text += parts.host + (parts.port.map { ":" + $0 } ?? "") + parts.path
        if parts.query != nil, let question = queryStart(url) {
            // libpq knows no fragment: a `#` in the query is part of a value (`password=X#Y`).
            let items = parameters(url[url.index(after: question)...]).map {
                !isSecret($0) ? String($0.item) : $0.value == nil ? "***" : $0.rawName + "=***"
            }
            text += "?" + items.joined(separator: "&")
        } else if let fragment = parts.fragment {
            text += "#" + fragment
        }
        // libpq ends a password at `@`, not at `#` or `?`: what RFC 3986 reads as a port and a fragment may be one.
        return scrubbed(text, of: url)
    }

    /// Whether a query parameter holds a secret: `password` or `sslpassword`, or an item without `=` that decodes to
    /// one with its value (`password%3DX`, which libpq refuses, quoting it).
    private static func isSecret(_ parameter: (item: Substring, rawName: Substring, name: String, value: Substring?)) -> Bool {
        if secretParameters.contains(parameter.name) { return true }
        guard parameter.value == nil, let equals = parameter.name.firstIndex(of: "=") else { return false }
        return secretParameters.contains(String(parameter.name[..<equals]))
    }

    /// Where the query of `url` starts (its `?`) as libpq reads it: the userinfo ends at the first `@` met before
    /// any `/`, so a `?` in a password (`u:Sec?ret@host/db`) does not start the query.
    private static func queryStart(_ url: String) -> String.Index? {
        var start = url.startIndex
        if let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") {
            start = url.index(colon, offsetBy: 3)
            if let stop = url[start...].firstIndex(where: { $0 == "@" || $0 == "/" }), url[stop] == "@" { start = stop }
        }
        return url[start...].firstIndex(of: "?")
    }

    /// A query's parameters (`a=1&%70assword=x`): each item whole, its name as written and percent-decoded, and its
    /// value as written (nil without `=`).
    private static func parameters(_ query: Substring) -> [(item: Substring, rawName: Substring, name: String, value: Substring?)] {
        query.split(separator: "&", omittingEmptySubsequences: false).map { item in
            let rawName = item.prefix { $0 != "=" }
            let value = rawName.endIndex < item.endIndex ? item[item.index(after: rawName.endIndex)...] : nil
            return (item, rawName, AbsoluteURL.percentDecoded(rawName), value)
        }
    }

    /// The connect timeout the daemon gives libpq when the URL and the environment give none, in seconds: without
    /// one, libpq waits for ever on a server that takes the connection and never answers (Protocol/README.md, "The
    /// store").
    public static let defaultConnectTimeout = 10

    /// `url` with `connect_timeout=` ``defaultConnectTimeout`` added, unless it has a `connect_timeout` parameter
    /// (its name percent-encoded or not) or `environment` (the value of `PGCONNECT_TIMEOUT`) is set.
    public static func withConnectTimeout(_ url: String, environment: String?) -> String {
        guard environment == nil else { return url }
        guard let question = queryStart(url) else { return url + "?connect_timeout=\(defaultConnectTimeout)" }
        let query = url[url.index(after: question)...]
        if parameters(query).contains(where: { $0.name == "connect_timeout" }) { return url }
        return url + (query.isEmpty || query.hasSuffix("&") ? "" : "&") + "connect_timeout=\(defaultConnectTimeout)"
    }

    /// `message` with every secret of `url` replaced by `***`: the userinfo's password (up to the first `@` and up
    /// to the last, since an unencoded `@` may be part of it; read up to the first `/` as libpq does, and up to the
    /// first `?` too, since an unencoded `/` may be part of it as the user meant it; and at the start of a quoted
    /// value, each of its pieces between `/`, `@`, `:`, `?` and `#` of 3 characters or more) and each `password` or
    /// `sslpassword` query value (or item, without its `=`), as written and percent-decoded. libpq's reason for a URI
    /// it cannot parse quotes the URI whole, which `redacted` cannot shorten, since it does not parse either.
    public static func scrubbed(_ message: String, of url: String) -> String {
        var secrets: [String] = []
        if let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") {
            let rest = url[url.index(colon, offsetBy: 3)...]
            for authority in [rest.prefix { $0 != "/" }, rest.prefix { $0 != "?" }] {
                guard let colon = authority.firstIndex(of: ":"), let firstAt = authority.firstIndex(of: "@"), colon < firstAt else {
                    continue
                }
                let lastAt = authority.lastIndex(of: "@")!
                let passwords = [authority[authority.index(after: colon)..<firstAt], authority[authority.index(after: colon)..<lastAt]]
                secrets += passwords.map(String.init)
                // libpq may quote a piece of a password it split as a port, a host or a database name (`u:abcd/efgh@`
                // gives port "abcd"): a quoted value that starts with a piece of 3 characters or more loses it, and so
                // does the Unix socket path that ends with it as a port (`/run/postgresql/.s.PGSQL.12345`).
                let pieces = passwords.flatMap { $0.split(whereSeparator: { "/@:?#".contains($0) }) }.filter { $0.count >= 3 }
                secrets += pieces.flatMap { ["\"" + $0, ".s.PGSQL." + $0] }
            }
        }
        if let question = queryStart(url) {
            for parameter in parameters(url[url.index(after: question)...]) where isSecret(parameter) {
                secrets.append(String(parameter.value ?? parameter.item))
            }
        }
        secrets += secrets.map { AbsoluteURL.percentDecoded($0) }
        var text = Array(message.utf8)
        for secret in Set(secrets.filter { !$0.isEmpty }).sorted(by: { $0.utf8.count > $1.utf8.count }) {
            let bytes = Array(secret.utf8)
            let shown = ["\"", ".s.PGSQL."].first { secret.hasPrefix($0) } ?? ""
            let replacement = Array((shown + "***").utf8)
            var kept: [UInt8] = []
            var index = 0
            while index < text.count {
                if text[index...].starts(with: bytes) {
                    kept += replacement
                    index += bytes.count
                } else {
                    kept.append(text[index])
                    index += 1
                }
            }
            text = kept
        }
        return String(decoding: text, as: UTF8.self)
    }
}
