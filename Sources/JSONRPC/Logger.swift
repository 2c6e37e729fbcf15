import ArgumentParsing
import Glibc
import Synchronization

/// A tiny logger writing one line per message to stderr through a queue that never blocks the caller
/// (swift-log's shape, no dependency).
///
/// Messages are `@autoclosure`, so a disabled level costs nothing. The level is process-wide.
/// Never pass tokens, secrets or URLs with query strings.
public struct Logger: Sendable {
    /// Severity, lowest first.
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        case trace, debug, info, warning, error

        public init?(name: String) {
            guard let level = Level.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
            self = level
        }

        /// `trace`, `debug`, … as written in logs and on the command line (spelled out: interpolating an enum
        /// looks its conformances up at run time, a millisecond at start-up).
        public var name: String {
            switch self {
            case .trace: "trace"
            case .debug: "debug"
            case .info: "info"
            case .warning: "warning"
            case .error: "error"
            }
        }

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        /// The syslog priority journald reads from a `<N>` prefix: debug 7, info 6, warning 4, error 3.
        var syslogPriority: Int {
            switch self {
            case .trace, .debug: return 7
            case .info: return 6
            case .warning: return 4
            case .error: return 3
            }
        }
    }

    private static let threshold = Atomic<Int>(Level.info.rawValue)

    /// The process-wide minimum level written (default `.info`).
    public static var level: Level {
        get { Level(rawValue: threshold.load(ordering: .relaxed)) ?? .info }
        set { threshold.store(newValue.rawValue, ordering: .relaxed) }
    }

    /// Short name of the component, first on each line.
    public let label: String

    public init(label: String) { self.label = label }

    /// Queues the line for stderr; never blocks (see ``LogQueue``).
    public func log(_ level: Level, _ message: @autoclosure () -> String) {
        guard level.rawValue >= Logger.threshold.load(ordering: .relaxed) else { return }
        LogQueue.shared.enqueue(Logger.format(level, label: label, message()))
    }

    /// As ``log(_:_:)``, then waits until every queued line is written, at most `timeout`: for the last line before
    /// `_exit`, which skips the drain `atexit` does (a stderr nobody reads holds the process no longer than that).
    public func logBeforeExit(_ level: Level, _ message: String, timeout: Duration = .milliseconds(500)) {
        log(level, message)
        let (seconds, attoseconds) = timeout.components
        LogQueue.shared.drain(timeoutNanos: UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000))
    }

    /// Whether stderr is connected to the journal: `JOURNAL_STREAM` holds `DEVICE:INODE` of the stream journald
    /// gave the service, and it is stderr only when those match fd 2 (systemd.exec(5), "Environment variables in
    /// spawned processes": a child whose stderr was redirected inherits the variable, but not the stream).
    static let journald = LogStream.isJournal(getenv("JOURNAL_STREAM").map { String(cString: $0) }, fd: 2)

    /// One line: `TIME passbridge[PID] LEVEL LABEL: MESSAGE\n`, TIME being RFC 3339 in UTC with milliseconds
    /// (``LogStream/timestamp(_:)``); under journald, which stamps lines itself, `<N>passbridge[PID] …` instead, `N`
    /// the syslog priority.
    static func format(_ level: Level, label: String, _ message: String) -> [UInt8] {
        format(level, label: label, message, journald: journald, now: LogStream.now())
    }

    /// ``format(_:label:_:)`` for a given journald answer and time (epoch milliseconds).
    static func format(_ level: Level, label: String, _ message: String, journald: Bool, now: Int64) -> [UInt8] {
        let prefix = journald ? "<\(level.syslogPriority)>" : LogStream.timestamp(now) + " "
        return Array("\(prefix)passbridge[\(getpid())] \(level.name) \(label): \(oneLine(message))\n".utf8)
    }

    public func trace(_ message: @autoclosure () -> String) { log(.trace, message()) }
    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
}

/// What a log line's start depends on: whether stderr is the journal, and the time.
public enum LogStream {
    /// True when `journalStream` (the value of `JOURNAL_STREAM`, `DEVICE:INODE` in decimal) names the device and
    /// inode of `fd`; false when it is unset, malformed, or names another stream.
    public static func isJournal(_ journalStream: String?, fd: Int32) -> Bool {
        guard let journalStream else { return false }
        let parts = journalStream.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    /// The wall clock in epoch milliseconds.
    public static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    /// RFC 3339 in UTC with milliseconds: `2026-12-01T12:03:40.123Z` for `millis` since the epoch.
    public static func timestamp(_ millis: Int64) -> String {
        var seconds = time_t(millis.quotientAndRemainder(dividingBy: 1000).quotient - (millis % 1000 < 0 ? 1 : 0))
        let fraction = ((millis % 1000) + 1000) % 1000
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(fraction), 3))Z"
    }
}
