import Synchronization
import XCTest

@testable import AccessEnabler

/// The store's failures are logged by runs (`StoreFailureLog`): the first, then at most one line per interval with
/// the count of those not logged, and the end of the run; the clock is the test's.
final class StoreFailureLogTests: XCTestCase {
    func testARunOfFailuresIsItsFirstLineOneLinePerIntervalAndItsEnd() {
        let lines = Mutex<[String]>([])
        let clock = Atomic<UInt64>(0)
        let failures = StoreFailureLog(log: { _, line in lines.withLock { $0.append(line()) } }, now: { clock.load(ordering: .relaxed) })
        let down = TokenStoreError.postgreSQL(operation: "connect", message: "no such file")
        func at(_ seconds: Double, _ event: () -> Void) {
            clock.store(UInt64(seconds * 1e9), ordering: .relaxed)
            event()
        }
        at(0) { failures.succeeded() }
        at(1) { failures.failed(down) }
        for second in 2...10 { at(Double(second)) { failures.failed(down) } }
        at(10.999) { failures.failed(down, "writing the cache") }
        at(11) { failures.failed(down, "writing the cache") }
        at(12) { failures.failed(down) }
        at(13.5) { failures.succeeded() }
        at(14) { failures.succeeded() }
        at(30) { failures.failed(down) }
        XCTAssertEqual(
            lines.withLock { $0 },
            [
                "store failure: PostgreSQL connect failed: no such file",
                "store failure writing the cache: PostgreSQL connect failed: no such file (10 more failed operations since the last line)",
                "store working again after 12.5 s (13 failed operations in all)",
                "store failure: PostgreSQL connect failed: no such file",
            ])
    }
}
