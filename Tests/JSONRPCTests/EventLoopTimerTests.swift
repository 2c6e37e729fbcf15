import Foundation
import Synchronization
import ThreadAffinity
import XCTest

@testable import JSONRPC

/// Timers run by the event loop itself (`TimerExecutor`): the engines' second-screen polls and logout timeouts.
final class EventLoopTimerTests: XCTestCase {
    func testTimerQueueRunsByDeadlineThenByOrderAdded() {
        var queue = TimerQueue()
        let fired = Mutex<[String]>([])
        func add(_ name: String, at deadline: UInt64) { queue.add(at: deadline) { fired.withLock { $0.append(name) } } }
        add("c", at: 300)
        add("a", at: 100)
        add("b1", at: 200)
        add("b2", at: 200)
        XCTAssertEqual(queue.nextDeadline, 100)
        XCTAssertEqual(queue.millisecondsToNext(now: 50), 1, "rounded up: never a wait that ends early")
        XCTAssertEqual(queue.millisecondsToNext(now: 150), 0)
        for body in queue.takeDue(now: 200) { body() }
        XCTAssertEqual(fired.withLock { $0 }, ["a", "b1", "b2"])
        XCTAssertEqual(queue.nextDeadline, 300)
        XCTAssertEqual(queue.takeDue(now: 299).count, 0)
        for body in queue.takeDue(now: 300) { body() }
        XCTAssertTrue(queue.isEmpty)
        XCTAssertNil(queue.millisecondsToNext(now: 0))
    }

    /// Timers added from another thread wake the idle loop (no connection: it would otherwise wait forever), run
    /// on the loop's thread in deadline order, and can stop it.
    func testTheLoopRunsItsTimersOnItsThreadInDeadlineOrder() {
        let loop = EventLoop()
        let fired = Mutex<[(name: String, onLoop: Bool)]>([])
        let stopped = expectation(description: "the loop returned")
        let thread = Thread {
            loop.run()
            stopped.fulfill()
        }
        thread.start()
        for (name, milliseconds) in [("third", 30), ("first", 10), ("second", 20)] {
            loop.run(after: .milliseconds(milliseconds)) { fired.withLock { $0.append((name, loop.thread.isOwner)) } }
        }
        loop.run(after: .milliseconds(40)) { loop.requestShutdown() }
        wait(for: [stopped], timeout: 10)
        XCTAssertEqual(fired.withLock { $0.map(\.name) }, ["first", "second", "third"])
        XCTAssertEqual(fired.withLock { $0.map(\.onLoop) }, [true, true, true])
    }
}
