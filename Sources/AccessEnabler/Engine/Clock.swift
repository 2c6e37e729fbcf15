import struct FoundationEssentials.Date
import Glibc
import Synchronization

/// The engine's clock: the backend's time, carried forward by the time elapsed since the
/// device booted (CLOCK_BOOTTIME), so that a step of the local wall clock (a box that boots at 1970 and is set
/// by NTP later) moves nothing. Before the first backend `Date` header it is the local clock. Expiry decisions
/// use `now()`.
final class SkewedClock: Sendable {
    /// Skew above which the status CFG100 is reported (5 minutes).
    static let warningThreshold: Double = 300

    private let local: @Sendable () -> Date
    private let elapsed: @Sendable () -> Double
    /// The backend's time at the last anchoring and the elapsed time then; whether CFG100 was reported for the
    /// current skew (backend time minus local wall clock).
    private let state = Mutex<(anchor: (server: Date, elapsed: Double)?, warned: Bool)>((nil, false))

    /// - Parameters:
    ///   - local: the wall clock.
    ///   - elapsed: seconds since an arbitrary fixed origin that only moves forward, suspend included
    ///     (default: CLOCK_BOOTTIME).
    init(local: @escaping @Sendable () -> Date, elapsed: @escaping @Sendable () -> Double = SkewedClock.bootTime) {
        self.local = local
        self.elapsed = elapsed
    }

    /// Seconds since boot, suspend included.
    static func bootTime() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// The corrected time.
    func now() -> Date {
        guard let anchor = state.withLock({ $0.anchor }) else { return local() }
        return anchor.server.addingTimeInterval(elapsed() - anchor.elapsed)
    }

    /// Epoch milliseconds of `now()`.
    func nowMillis() -> Int64 { Int64((now().timeIntervalSince1970 * 1000).rounded()) }

    /// Records the backend's `Date` header value (RFC 1123, one-second resolution).
    /// - Returns: true when the skew just went over the CFG100 threshold.
    func observe(dateHeader: String) -> Bool {
        guard let serverDate = DateHeader.parse(dateHeader) else { return false }
        let skew = serverDate.timeIntervalSince(local()).rounded()
        let elapsedNow = elapsed()
        return state.withLock { state in
            // The header has one-second resolution: keep the finer previous anchor while it agrees.
            let predicted = state.anchor.map { $0.server.addingTimeInterval(elapsedNow - $0.elapsed) }
            if predicted.map({ abs(serverDate.timeIntervalSince($0)) > 1.5 }) ?? true {
                state.anchor = (serverDate, elapsedNow)
            }
            let over = abs(skew) > Self.warningThreshold
            defer { state.warned = over }
            return over && !state.warned
        }
    }
}
