import Foundation
import Synchronization

/// The engine's clock: the local clock corrected by the skew measured from the backend's `Date` header
/// (DESIGN §4 "Time"). Expiry decisions use `now()`.
final class SkewedClock: Sendable {
    /// Skew above which the status CFG100 is reported (5 minutes).
    static let warningThreshold: TimeInterval = 300

    private let local: @Sendable () -> Date
    /// Seconds to add to the local clock, and whether CFG100 was reported for the current skew.
    private let state = Mutex<(skew: TimeInterval, warned: Bool)>((0, false))

    init(local: @escaping @Sendable () -> Date) { self.local = local }

    /// The corrected time.
    func now() -> Date { local().addingTimeInterval(state.withLock { $0.skew }) }

    /// Epoch milliseconds of `now()`.
    func nowMillis() -> Int64 { Int64((now().timeIntervalSince1970 * 1000).rounded()) }

    /// Records the backend's `Date` header value (RFC 1123, one-second resolution).
    /// - Returns: true when the skew just went over the CFG100 threshold.
    func observe(dateHeader: String) -> Bool {
        guard let serverDate = HTTPDate.parse(dateHeader) else { return false }
        let measured = serverDate.timeIntervalSince(local())
        return state.withLock { state in
            // The header has one-second resolution: keep the finer previous estimate while it agrees.
            if abs(measured - state.skew) > 1.5 { state.skew = measured.rounded() }
            let over = abs(state.skew) > Self.warningThreshold
            defer { state.warned = over }
            return over && !state.warned
        }
    }
}

/// RFC 1123 dates of HTTP headers (`Sun, 06 Nov 1994 08:49:37 GMT`).
enum HTTPDate {
    static func parse(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }

    static func format(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
