import JSON
import XCTest

@testable import PassEmulator

/// The throttle's bucket arithmetic, on a clock the test moves (no sockets, no sleeps).
final class ThrottleTests: XCTestCase {
    private func settings(_ json: JSON) throws -> ThrottleSettings { try ThrottleSettings(Reader(json, path: "throttle")) }

    func testBurstThenSteadyRateWithRetryAfterInWholeSeconds() throws {
        var throttle = Throttle(try settings(["requestsPerSecond": 1, "burst": 3]))
        XCTAssertEqual((0..<3).map { _ in throttle.take("a", now: 0) }, [nil, nil, nil])
        XCTAssertEqual(throttle.take("a", now: 0), 1)
        XCTAssertEqual(throttle.take("a", now: 400), 1)  // 0.6 s still missing → 1
        XCTAssertNil(throttle.take("a", now: 1000))
        XCTAssertEqual(throttle.take("a", now: 1000), 1)
        XCTAssertNil(throttle.take("b", now: 1000))  // another caller has its own burst
        XCTAssertNil(throttle.take("a", now: 61_000))
        XCTAssertEqual(throttle.take("a", now: 61_000), 1)  // a pause refills one second's worth, not the burst
    }

    func testSlowRatesWaitSeveralSecondsAndTheClockMayGoBack() throws {
        var throttle = Throttle(try settings(["requestsPerSecond": 0.25, "burst": 0]))
        XCTAssertEqual(throttle.take("a", now: 10_000), 4)
        XCTAssertEqual(throttle.take("a", now: 13_000), 1)
        XCTAssertEqual(throttle.take("a", now: 5_000), 1)  // backwards: no refill, no crash
        XCTAssertNil(throttle.take("a", now: 6_000))
    }

    func testSettingsDefaultsAndErrorsNameTheirPath() throws {
        let defaults = try settings([:])
        XCTAssertEqual(defaults.requestsPerSecond, 1)
        XCTAssertEqual(defaults.burst, 10)
        XCTAssertEqual(defaults.per, .address)
        XCTAssertTrue(defaults.retryAfter)
        XCTAssertThrowsError(try settings(["per": "planet"])) { error in
            XCTAssertEqual((error as? ConfigError)?.message, "throttle.per: expected address, device, client")
        }
        XCTAssertTrue(ThrottleSettings.applies(to: "/api/v2/REF/configuration"))
        XCTAssertTrue(ThrottleSettings.applies(to: "/o/client/token"))
        XCTAssertFalse(ThrottleSettings.applies(to: "/__admin/clock"))
        XCTAssertFalse(ThrottleSettings.applies(to: "/mock-mvpd/MockMVPD/login"))
    }
}
