import Glibc
import Synchronization

/// A tiny logger writing one line per message to stderr (swift-log's shape, no dependency).
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

    public func log(_ level: Level, _ message: @autoclosure () -> String) {
        guard level.rawValue >= Logger.threshold.load(ordering: .relaxed) else { return }
        let line = "passbridge[\(getpid())] \(level) \(label): \(message())\n"
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }

    public func trace(_ message: @autoclosure () -> String) { log(.trace, message()) }
    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
}
