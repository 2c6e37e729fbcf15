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

    /// A timer already due when the loop's wait returns runs before the input that wait found: a request sent after
    /// another thread scheduled work at once is handled after that work. Input and timer are made ready while the
    /// loop is held in a timer of its own, so that one wait finds both. (A CI run answered a preauthorization
    /// from permits whose login another connection had just rewritten: the drop, a timer, ran after the request.)
    func testATimerDueBeforeInputArrivedRunsBeforeThatInput() throws {
        let loop = EventLoop()
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        let (input, output) = (ends[0], ends[1])
        defer { close(input); close(output) }
        let order = Mutex<[String]>([])
        let held = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        let stopped = expectation(description: "the loop returned")
        let thread = Thread {
            loop.run()
            stopped.fulfill()
        }
        thread.start()
        loop.run(after: .zero) {
            loop.watch(input, reading: true, writing: false) { _, _ in
                var byte: UInt8 = 0
                _ = read(input, &byte, 1)
                order.withLock { $0.append("input") }
                loop.forget(input)
                loop.requestShutdown()
            }
            holding.signal()
            held.wait()
        }
        holding.wait()
        loop.run(after: .zero) { order.withLock { $0.append("timer") } }
        var byte: UInt8 = 1
        XCTAssertEqual(write(output, &byte, 1), 1)
        held.signal()
        wait(for: [stopped], timeout: 10)
        XCTAssertEqual(order.withLock { $0 }, ["timer", "input"])
    }
}
