@testable import AccessEnabler
import Synchronization
import XCTest

/// `ThreadExecutor`'s timers: the engine's poll and logout timers when it has no event loop (a library user).
final class ThreadExecutorTimerTests: XCTestCase {
    func testTimersRunOnTheExecutorsThreadInDeadlineOrderBetweenJobs() {
        let executor = ThreadExecutor(name: "pb-timer-test")
        let fired = Mutex<[String]>([])
        let done = expectation(description: "the last timer ran")
        for (name, milliseconds) in [("third", 30), ("first", 10), ("second", 20)] {
            executor.run(after: .milliseconds(milliseconds)) {
                executor.checkIsolated()  // stops the process off the executor's thread
                fired.withLock { $0.append(name) }
                if name == "third" { done.fulfill() }
            }
        }
        wait(for: [done], timeout: 10)
        XCTAssertEqual(fired.withLock { $0 }, ["first", "second", "third"])
    }
}
