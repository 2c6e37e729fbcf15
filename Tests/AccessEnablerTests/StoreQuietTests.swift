import Foundation
import ThreadAffinity
import XCTest

@testable import AccessEnabler

/// What the store's worker does not do: write an authorization expiry the store holds (`TokenStore.submit`), wake
/// while nothing is watched or waiting, or look at PostgreSQL at an interval when its connection's socket tells it
/// of the other daemons' changes (`StoreExecutor`).
final class StoreQuietTests: XCTestCase {
    private let profile = StoredProfile(json: #"{"mvpd":"MockMVPD"}"#, notAfter: 4_102_444_800_000)

    private func directory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("pb-quiet-\(UUID().uuidString)")
    }

    private func queueExpiry(_ store: TokenStore, _ notAfter: Int64, _ key: ProfileKey) {
        store.submit { $0.setAuthorizationExpiry(notAfter, key, resource: "ch1") }
    }

    /// A store's log that fails the test on a store failure (a cache write's failure is only logged). Other lines
    /// pass: the server's FATAL when the test's database is dropped under a store still open, say.
    static let noFailure: EngineLog = { _, line in
        let text = line()
        if text.contains("store failure") { XCTFail("store log: \(text)") }
    }

    /// The worker's sleep once it sleeps as `expected` says (waits for that, up to 5 s); nil when it never did.
    static func sleep(of store: TokenStore, _ expected: (StoreExecutor.Sleep) -> Bool) -> StoreExecutor.Sleep? {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if let sleep = store.executor.sleeping, expected(sleep) { return sleep }
            usleep(1000)
        }
        return nil
    }

    func testAnExpiryTheStoreHoldsIsNotWrittenAgainWhileItsLoginIsWatched() async throws {
        let store = try TokenStore(directory: directory(), log: Self.noFailure)
        let key = TokenStoreTests.key()
        let watch = store.watch([key.login]) { _ in }
        _ = try await store.profiles([key])
        try await store.saveProfile(profile, key)
        queueExpiry(store, 1000, key)
        let first = try await store.authorizationExpiry(key, resource: "ch1")
        XCTAssertEqual(first, 1000, "a read comes after the writes queued before it")
        XCTAssertEqual(store.authorizationExpiries.written, 1)
        for _ in 0..<3 { queueExpiry(store, 1000, key) }
        XCTAssertEqual(store.authorizationExpiries.unchanged, 3)
        queueExpiry(store, 2000, key)
        queueExpiry(store, 3000, key)
        let latest = try await store.authorizationExpiry(key, resource: "ch1")
        XCTAssertEqual(latest, 3000)
        XCTAssertEqual(store.authorizationExpiries.written, 2, "two values queued for one row before the write make one write")
        // The logout deletes the expiries: the same value is written again.
        try await store.deleteProfile(key)
        try await store.saveProfile(profile, key)
        queueExpiry(store, 3000, key)
        let again = try await store.authorizationExpiry(key, resource: "ch1")
        XCTAssertEqual(again, 3000)
        XCTAssertEqual(store.authorizationExpiries.written, 3)
        withExtendedLifetime(watch) {}
    }

    func testAnUnwatchedLoginsExpiryIsAlwaysWrittenAndQueuedWritesAreMadeAtClose() async throws {
        let shared = directory()
        let store = try TokenStore(directory: shared, log: Self.noFailure)
        let key = TokenStoreTests.key()
        try await store.saveProfile(profile, key)
        queueExpiry(store, 1000, key)
        _ = try await store.authorizationExpiry(key, resource: "ch1")
        queueExpiry(store, 1000, key)
        store.close()
        XCTAssertEqual(store.authorizationExpiries.written, 2, "an unwatched login's expiry is not remembered")
        XCTAssertEqual(store.authorizationExpiries.unchanged, 0)
        let reopened = try TokenStore(directory: shared, log: Self.noFailure)
        let stored = try await reopened.authorizationExpiry(key, resource: "ch1")
        XCTAssertEqual(stored, 1000)
    }

    func testWithNothingWatchedOrQueuedTheWorkerSleepsWithoutATimer() async throws {
        let store = try TokenStore(directory: directory(), log: Self.noFailure)
        let key = TokenStoreTests.key()
        try await store.saveProfile(profile, key)
        let untimed = { (sleep: StoreExecutor.Sleep) in sleep == StoreExecutor.Sleep(deadline: nil, socket: false) }
        XCTAssertNotNil(Self.sleep(of: store, untimed), "nothing watched or queued: no timer")
        queueExpiry(store, 1000, key)
        XCTAssertNotNil(Self.sleep(of: store) { $0.deadline != nil }, "a queued write is made at its time")
        XCTAssertNotNil(Self.sleep(of: store, untimed), "and then nothing is left to wake for")
        let watch = store.watch([key.login]) { _ in }
        _ = try await store.profiles([key])
        // Other processes announce their login changes (`LoginAnnouncement`): the worker waits on its watch of the
        // file, with no timer (before, it looked every 200 ms while a login was watched).
        XCTAssertNotNil(
            Self.sleep(of: store) { $0 == StoreExecutor.Sleep(deadline: nil, socket: true) },
            "SQLite's watch is waited on while a login is watched")
        watch.cancel()
        XCTAssertNotNil(Self.sleep(of: store, untimed), "and not once the watch ended")
    }

    /// Cache writes that failed are tried again each time twice as late (0.25 s, 0.5 s, … 16 s), and a write queued
    /// meanwhile does not bring the next try forward; the eighth failure drops them (`CacheQueue`).
    func testFailedCacheWritesAreTriedAgainEachTimeTwiceAsLate() {
        var queue = CacheQueue()
        func writes(_ notAfter: Int64) -> CacheWrites {
            var writes = CacheWrites()
            writes.setAuthorizationExpiry(notAfter, TokenStoreTests.key(), resource: "ch1")
            return writes
        }
        let delay = Duration.milliseconds(250)
        XCTAssertTrue(queue.add(writes(1), delay: delay) { _ in nil })
        /// How long after now the next try comes, in ms (rounded down).
        func nextTry() -> UInt64 { (queue.due! &- TimerQueue.now()) / 1_000_000 }
        for failure in 1...(CacheQueue.attemptsAllowed - 1) {
            let failed = queue.take()
            XCTAssertFalse(queue.putBack(failed, delay: delay))
            let expected = UInt64(250 << (failure - 1))
            XCTAssertTrue((expected - 50...expected).contains(nextTry()), "failure \(failure): \(nextTry()) ms")
            // A newer value waits with the failed one, for the same try.
            XCTAssertFalse(queue.add(writes(Int64(failure + 1)), delay: delay) { _ in nil })
            XCTAssertTrue((expected - 50...expected).contains(nextTry()), "failure \(failure): \(nextTry()) ms")
        }
        XCTAssertEqual(queue.expiries.values.first, Int64(CacheQueue.attemptsAllowed))
        XCTAssertTrue(queue.putBack(queue.take(), delay: delay), "the eighth failure drops the writes")
        XCTAssertTrue(queue.isEmpty)
        XCTAssertNil(queue.due)
        XCTAssertTrue(queue.add(writes(99), delay: delay) { _ in nil }, "a new write after that starts afresh")
        XCTAssertTrue((200...250).contains(nextTry()))
    }
}

/// The fleet's feed sleeps on its connection's socket; skipped without PASSBRIDGE_TEST_POSTGRES_URL.
final class PostgreSQLStoreQuietTests: XCTestCase {
    private var database: PostgreSQLTestDatabase?

    override func setUpWithError() throws { database = try PostgreSQLTestDatabase() }

    override func tearDownWithError() throws { try database?.drop() }

    /// An expiry is written only with its profile: a cache write that comes after the login was deleted brings
    /// none back for it.
    func testAnExpiryIsWrittenOnlyWithItsProfile() async throws {
        let store = try TokenStore(postgreSQL: try XCTUnwrap(database).url)
        let key = TokenStoreTests.key()
        try await store.saveProfile(StoredProfile(json: "{}", notAfter: 4_102_444_800_000), key)
        try await store.executor.run { try $0.setAuthorizationExpiry(11, key, resource: "ch1") }
        let written = try await store.authorizationExpiry(key, resource: "ch1")
        XCTAssertEqual(written, 11)
        try await store.deleteProfile(key)
        try await store.executor.run { try $0.setAuthorizationExpiry(22, key, resource: "ch1") }
        let late = try await store.authorizationExpiry(key, resource: "ch1")
        XCTAssertNil(late)
    }

    func testAWatchingStoreSleepsOnItsSocketWithoutATimer() async throws {
        let store = try TokenStore(postgreSQL: try XCTUnwrap(database).url, lookInterval: .seconds(3600))
        let key = TokenStoreTests.key()
        _ = try await store.profiles([key])
        let watch = store.watch([key.login]) { _ in }
        let sleep = StoreQuietTests.sleep(of: store) { $0.socket }
        XCTAssertEqual(sleep, StoreExecutor.Sleep(deadline: nil, socket: true), "on the socket, with no timer")
        watch.cancel()
        XCTAssertNotNil(StoreQuietTests.sleep(of: store) { !$0.socket && $0.deadline == nil }, "nothing once the watch ended")
    }
}
