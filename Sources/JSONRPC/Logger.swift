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
            guard let level = Level.allCases.first(where: { "\($0)" == name.lowercased() }) else { return nil }
            self = level
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

    /// Under journald (`JOURNAL_STREAM` set), lines start with their syslog priority (`<7>` … `<3>`).
    private static let journald = getenv("JOURNAL_STREAM") != nil

    /// One line: `passbridge[PID] LEVEL LABEL: MESSAGE\n`, with a `<N>` priority prefix under journald.
    static func format(_ level: Level, label: String, _ message: String) -> [UInt8] {
        let prefix = journald ? "<\(level.syslogPriority)>" : ""
        return Array("\(prefix)passbridge[\(getpid())] \(level) \(label): \(message)\n".utf8)
    }

    public func trace(_ message: @autoclosure () -> String) { log(.trace, message()) }
    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
}
