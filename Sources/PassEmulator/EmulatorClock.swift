import Glibc
import Synchronization

/// The emulator's clock: the system clock plus an offset that `/__admin/clock` moves, or, once stopped there, one
/// instant that only `/__admin/clock` moves. Every timestamp, expiry and `Date` header of the emulator reads it.
public final class EmulatorClock: Sendable {
    private struct State {
        var offsetMillis: Int64 = 0
        /// The instant the clock stands at while stopped.
        var stoppedAt: Int64?
    }

    private let state = Mutex(State())

    public init() {}

    /// Milliseconds since the Unix epoch as the emulator sees them.
    public func nowMillis() -> Int64 { state.withLock { now($0) } }

    /// Moves the clock forward (or back, when negative) by `seconds`.
    public func advance(seconds: Double) {
        state.withLock { state in
            let millis = Int64(seconds * 1000)
            if let stopped = state.stoppedAt { state.stoppedAt = stopped + millis } else { state.offsetMillis += millis }
        }
    }

    /// Sets the clock to `millis` since the epoch; it keeps running from there unless stopped.
    public func set(millis: Int64) {
        state.withLock { state in
            if state.stoppedAt != nil { state.stoppedAt = millis } else { state.offsetMillis = millis - systemMillis() }
        }
    }

    /// Stops the clock where it is (`true`: every later read gives the same instant until it is moved or runs
    /// again), or lets it run on from there (`false`).
    public func stop(_ stopped: Bool) {
        state.withLock { state in
            let now = now(state)
            if stopped {
                state.stoppedAt = now
            } else {
                state.stoppedAt = nil
                state.offsetMillis = now - systemMillis()
            }
        }
    }

    /// Back to the system clock, running.
    public func reset() { state.withLock { $0 = State() } }

    private func now(_ state: State) -> Int64 { state.stoppedAt ?? systemMillis() + state.offsetMillis }

    private func systemMillis() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}

/// RFC 1123 dates for the HTTP `Date` header, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
public enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Formats milliseconds since the epoch (sub-second part dropped).
    public static func format(millis: Int64) -> String {
        var seconds = time_t(millis / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
