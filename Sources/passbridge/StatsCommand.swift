import AccessEnabler
import ArgumentParsing
import Bridge
import Glibc
import JSON

/// `passbridge stats [--socket PATH]`: a running daemon's `rpc.stats` as OpenMetrics text, for a Prometheus scrape
/// or node_exporter's textfile collector (Protocol/README.md, "Diagnostics", names each metric).
enum StatsCommand {
    struct Options: Sendable {
        /// `$PASSBRIDGE_SOCKET` when set (as `passbridge-call dev` exports it), else the packaged daemon's socket.
        var socket =
            getenv("PASSBRIDGE_SOCKET").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/run/passbridge/passbridge.sock"
        /// false: Prometheus' older text format (`--format prometheus`), which node_exporter's textfile collector reads.
        var openMetrics = true
    }

    static let table = OptionTable<Options, UsageError>([
        .init(
            "OPTIONS",
            [
                .option(
                    "--socket", "PATH", help: "The daemon's Unix socket (passbridge --socket PATH); $PASSBRIDGE_SOCKET when set.",
                    default: { $0.socket }
                ) {
                    (options, path) throws(UsageError) in
                    guard !path.isEmpty else { throw UsageError("--socket needs a path") }
                    options.socket = path
                },
                .option(
                    "--format", "openmetrics|prometheus",
                    help: "OpenMetrics text, or Prometheus' text format 0.0.4 (no # UNIT and # EOF lines; a counter's HELP and "
                        + "TYPE name its _total sample), which node_exporter's textfile collector reads.",
                    default: { $0.openMetrics ? "openmetrics" : "prometheus" }
                ) { (options, format) throws(UsageError) in
                    guard format == "openmetrics" || format == "prometheus" else {
                        throw UsageError("--format must be openmetrics or prometheus, got \(format)")
                    }
                    options.openMetrics = format == "openmetrics"
                },
            ])
    ])

    static var usage: String {
        """
        USAGE: passbridge stats [--socket PATH] [--format openmetrics|prometheus]

        Asks the daemon listening on PATH for rpc.stats and prints it as OpenMetrics text: passbridge_instances,
        passbridge_connections (this one not counted), passbridge_calls_in_flight, passbridge_heap_bytes and
        passbridge_uptime_seconds (gauges), passbridge_profile_reads_total{source},
        passbridge_authorization_expiries_total{outcome} and passbridge_store_failures_total (counters), and
        passbridge_store_failing (a gauge). Exit 1 when the daemon cannot be reached, or answers with an error
        (saying it: a daemon that does not serve the caller says why) or with something that is not rpc.stats, or
        gives no answer line within 5 s.


        """ + table.usage(defaults: Options(), column: 17)
    }

    static let program = CommandLineProgram(name: "passbridge stats", version: DaemonOptions.version, usage: usage)

    /// Runs the subcommand; returns the exit code (0; 1 when the daemon cannot be asked; 2 on bad usage).
    static func run(_ arguments: [String]) -> Int32 {
        if let status = program.helpOrVersion(arguments) { return status }
        var options = Options()
        do throws(UsageError) {
            try table.parse(arguments, into: &options)
        } catch {
            return program.usageError(error)
        }
        let answer: JSON
        switch ask(options.socket) {
        case .success(let value): answer = value
        case .failure(let failure): return program.failure(failure.message)
        }
        // Its answer, or a refusal (-32005 comes with id null, before the request was read): then its own words.
        let ours = answer["jsonrpc"] == .string("2.0") && (answer["id"] == .integer(1) || answer["id"] == .null)
        if ours, let error = answer["error"], let message = error["message"]?.stringValue {
            let reason = error["data"]?["reason"]?.stringValue.map { ": \($0)" } ?? ""
            return program.failure("\(options.socket) answered \(message)\(reason)")
        }
        guard ours, answer["id"] == .integer(1), let stats = answer["result"], let missing = missingField(stats) else {
            let excerpt = Text.excerpt(String(decoding: answer.serialized(), as: UTF8.self))
            return program.failure("\(options.socket) answered rpc.stats with \(excerpt)")
        }
        guard missing.isEmpty else {
            return program.failure(
                "\(options.socket) answered rpc.stats without a number of 0 or more for \(missing.joined(separator: ", "))"
                    + " (is it a PassBridge daemon?)")
        }
        writeOut(text(stats, openMetrics: options.openMetrics))
        return 0
    }

    /// The fields of an `rpc.stats` result (Protocol/README.md, "Diagnostics") that `text` exports.
    static let fields = [
        ["instances"], ["connections"], ["callsInFlight"], ["profileReads", "memory"], ["profileReads", "store"],
        ["authorizationExpiries", "written"], ["authorizationExpiries", "unchanged"], ["storeFailures", "operations"],
        ["storeFailures", "failing"], ["heapBytes"], ["uptimeSeconds"],
    ]

    /// nil when `stats` is no object; else the exported fields it lacks a number of 0 or more for (dotted; every
    /// field is a count or a size, an integer, but for `uptimeSeconds`, a time; `storeFailures.failing` is 0 or 1),
    /// none when complete.
    static func missingField(_ stats: JSON) -> [String]? {
        guard stats.objectValue != nil else { return nil }
        return fields.filter { path in
            switch path.reduce(Optional(stats), { $0?[$1] }) {
            case .integer(let value): value < 0 || (path == ["storeFailures", "failing"] && value > 1)
            case .double(let value): path != ["uptimeSeconds"] || !(value >= 0 && value.isFinite)
            default: true
            }
        }.map { $0.joined(separator: ".") }
    }

    /// The text of `stats` (an `rpc.stats` result): one family per field, with `# EOF` last in OpenMetrics; in
    /// Prometheus' older format the counter's family is named after its `_total` sample and there is no `# UNIT`.
    static func text(_ stats: JSON, openMetrics: Bool) -> String {
        func number(_ value: JSON?) -> String {
            switch value {
            case .integer(let integer): "\(integer)"
            case .double(let double): "\(double)"
            default: "NaN"
            }
        }
        // The connection that asked is one of the daemon's `connections`: not counted, so a scrape does not show itself.
        let connections: JSON? =
            switch stats["connections"] {
            case .integer(let count): .integer(max(0, count - 1))
            case let other: other
            }
        var text = ""
        for (name, value, help) in [
            ("instances", stats["instances"], "AccessEnabler instances alive in the daemon."),
            ("connections", connections, "Open connections that have sent a message, the one asking for these metrics not counted."),
            ("calls_in_flight", stats["callsInFlight"], "Calls accepted and not answered yet."),
        ] {
            text += "# HELP passbridge_\(name) \(help)\n# TYPE passbridge_\(name) gauge\npassbridge_\(name) \(number(value))\n"
        }
        for (name, field, label, help) in [
            ("profile_reads", "profileReads", "source", "Reads of stored logins since the daemon started, by where they were served."),
            (
                "authorization_expiries", "authorizationExpiries", "outcome",
                "Authorization expiries since the daemon started: written to the store, or not written because it held them."
            ),
        ] {
            let family = openMetrics ? "passbridge_\(name)" : "passbridge_\(name)_total"
            text += "# HELP \(family) \(help)\n# TYPE \(family) counter\n"
            let values = field == "profileReads" ? ["memory", "store"] : ["written", "unchanged"]
            for value in values {
                text += "passbridge_\(name)_total{\(label)=\"\(value)\"} \(number(stats[field]?[value]))\n"
            }
        }
        let failures = openMetrics ? "passbridge_store_failures" : "passbridge_store_failures_total"
        text += "# HELP \(failures) Store operations that failed since the daemon started.\n# TYPE \(failures) counter\n"
        text += "passbridge_store_failures_total \(number(stats["storeFailures"]?["operations"]))\n"
        text += "# HELP passbridge_store_failing 1 while the store is failing: from a failure until an operation succeeds.\n"
        text += "# TYPE passbridge_store_failing gauge\npassbridge_store_failing \(number(stats["storeFailures"]?["failing"]))\n"
        text += "# HELP passbridge_heap_bytes Memory the daemon's allocator has handed out and not taken back.\n"
        text += "# TYPE passbridge_heap_bytes gauge\n"
        if openMetrics { text += "# UNIT passbridge_heap_bytes bytes\n" }
        text += "passbridge_heap_bytes \(number(stats["heapBytes"]))\n"
        text += "# HELP passbridge_uptime_seconds Time since the daemon began serving.\n# TYPE passbridge_uptime_seconds gauge\n"
        if openMetrics { text += "# UNIT passbridge_uptime_seconds seconds\n" }
        text += "passbridge_uptime_seconds \(number(stats["uptimeSeconds"]))\n"
        return openMetrics ? text + "# EOF\n" : text
    }

    /// Why the daemon could not be asked.
    struct Failure: Error {
        let message: String
    }

    /// The longest answer line read: a daemon's is about 250 bytes.
    static let answerLimit = 65_536

    /// Sends one `rpc.stats` request on a new connection to `path` and reads the answer's line: 5 s at most for the
    /// whole exchange, and at most `answerLimit` bytes.
    private static func ask(_ path: String) -> Result<JSON, Failure> {
        var address = sockaddr_un()
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            return .failure(Failure(message: "socket path too long: \(path)"))
        }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failure(Failure(message: "socket: \(String(cString: strerror(errno)))")) }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)  // the request; the answer has its own deadline below
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { return .failure(Failure(message: connectFailure(path, errno))) }
        let request = Array(#"{"jsonrpc":"2.0","id":1,"method":"rpc.stats"}"#.utf8) + [0x0A]
        // A daemon that refuses the peer (-32005) writes why and closes: a write that fails is told only when no such
        // line can be read.
        var writeFailure: Failure?
        if request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) != request.count {
            writeFailure = Failure(message: "cannot write to \(path): \(String(cString: strerror(errno)))")
        }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let deadline = ContinuousClock.now + .seconds(5)
        var lineEnd: Int?
        while lineEnd == nil {
            let left = deadline - ContinuousClock.now
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard left > .zero, poll(&ready, 1, Int32((left / .milliseconds(1)).rounded(.up))) > 0 else {
                return .failure(writeFailure ?? Failure(message: "no answer from \(path) within 5 s"))
            }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard count > 0 else {
                if count < 0 && (errno == EAGAIN || errno == EINTR) { continue }
                let reason = count == 0 ? "closed the connection" : String(cString: strerror(errno))
                return .failure(writeFailure ?? Failure(message: "no answer from \(path): \(reason)"))
            }
            lineEnd = chunk[..<count].firstIndex(of: 0x0A).map { received.count + $0 }
            received += chunk[..<count]
            guard lineEnd != nil || received.count <= answerLimit else {
                return .failure(Failure(message: "\(path) answered more than \(answerLimit) bytes without a line end"))
            }
        }
        let line = received[..<(lineEnd ?? received.endIndex)]
        guard let answer = try? JSON.parse(Array(line)) else { return .failure(Failure(message: "\(path) answered with no JSON")) }
        return .success(answer)
    }

    /// Why connecting to `path` failed (`error`, an errno), saying what a refusal means: no socket there (a file, a
    /// directory: "Connection refused" said nothing of it), or a socket no daemon listens on; and for a path with
    /// nothing there (the default one, on a box that runs no packaged daemon), how to name another.
    private static func connectFailure(_ path: String, _ error: Int32) -> String {
        let reason = "cannot connect to \(path): \(String(cString: strerror(error)))"
        if error == ENOENT { return reason + " (--socket PATH or $PASSBRIDGE_SOCKET names a daemon's socket)" }
        guard error == ECONNREFUSED else { return reason }
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK else { return "\(path) is not a socket" }
        return reason + " (no daemon listens there: a daemon that was killed leaves its socket behind)"
    }
}
