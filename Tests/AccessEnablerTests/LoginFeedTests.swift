import Foundation
import Synchronization
import XCTest

@testable import AccessEnabler

/// The store's live logins (`TokenStore.watch`, `LoginFeed`): watched logins are read from memory, and a change of
/// who is logged in reaches the watchers whether this store, another store on the same SQLite file (another
/// process), or another daemon of the fleet (PostgreSQL, also across a lost connection) made it.
final class LoginFeedTests: XCTestCase {
    private let profile = StoredProfile(json: #"{"mvpd":"MockMVPD"}"#, notAfter: 4_102_444_800_000)

    /// Collects deliveries; `next` waits (up to 5 s) for the next one.
    final class Deliveries: Sendable {
        private let received = Mutex<[Set<LoginKey>]>([])
        private let arrived = DispatchSemaphore(value: 0)

        var deliver: @Sendable (Set<LoginKey>) -> Void {
            { [self] logins in
                received.withLock { $0.append(logins) }
                arrived.signal()
            }
        }

        func next(timeout: TimeInterval = 5) -> Set<LoginKey>? {
            guard arrived.wait(timeout: .now() + timeout) == .success else { return nil }
            return received.withLock { $0.removeFirst() }
        }

        var count: Int { received.withLock { $0.count } }
    }

    /// `watching` watches `key`'s login (nothing stored yet); `writing`, another store on the same database (another
    /// process or daemon), stores `profile` there, and `watching`'s watcher is told within a second. Returns the
    /// watch (keep it) and the deliveries still to come.
    static func aLoginWrittenByOneIsDeliveredToTheOther(
        _ watching: TokenStore, _ writing: TokenStore, _ key: ProfileKey, _ profile: StoredProfile
    ) async throws -> (LoginWatch, Deliveries) {
        let deliveries = Deliveries()
        let watch = watching.watch([key.login], deliver: deliveries.deliver)
        let before = try await watching.profiles([key])
        XCTAssertTrue(before.isEmpty)
        let started = Date()
        try await writing.saveProfile(profile, key)
        XCTAssertEqual(deliveries.next(), [key.login])
        XCTAssertLessThan(Date().timeIntervalSince(started), 1.0)
        return (watch, deliveries)
    }

    private func directory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("pb-feed-\(UUID().uuidString)")
    }

    func testAWatchedLoginIsReadFromMemoryAndItsWritesAreDelivered() async throws {
        let store = try TokenStore(directory: directory())
        let key = TokenStoreTests.key()
        let deliveries = Deliveries()
        let watch = store.watch([key.login], deliver: deliveries.deliver)
        let first = try await store.profiles([key])
        XCTAssertTrue(first.isEmpty)
        let afterFirst = store.profileReads
        let second = try await store.profiles([key])
        XCTAssertTrue(second.isEmpty)
        XCTAssertEqual(store.profileReads.store, afterFirst.store, "the second read is served from memory")
        XCTAssertEqual(store.profileReads.memory, afterFirst.memory + 1)

        try await store.saveProfile(profile, key)
        XCTAssertEqual(deliveries.next(), [key.login])
        let written = try await store.profiles([key])
        XCTAssertEqual(written.map(\.1), [profile])
        XCTAssertEqual(store.profileReads.store, afterFirst.store, "memory follows this store's writes")

        try await store.deleteProfile(key)
        XCTAssertEqual(deliveries.next(), [key.login])
        let deleted = try await store.profiles([key])
        XCTAssertTrue(deleted.isEmpty)
        _ = try await store.reset(LoginSelection(requestor: "REF"))
        XCTAssertEqual(deliveries.next(), [key.login])
        watch.cancel()
    }

    func testAnotherLoginIsNotDeliveredAndAnUnwatchedLoginIsNotKept() async throws {
        let store = try TokenStore(directory: directory())
        let watched = TokenStoreTests.key()
        let other = TokenStoreTests.key("REF2")
        let deliveries = Deliveries()
        let watch = store.watch([watched.login], deliver: deliveries.deliver)
        try await store.saveProfile(profile, other)
        _ = try await store.profiles([other])
        let reads = store.profileReads.store
        _ = try await store.profiles([other])
        XCTAssertEqual(store.profileReads.store, reads + 1, "an unwatched login is read from the store every time")
        try await store.saveProfile(profile, watched)
        XCTAssertEqual(deliveries.next(), [watched.login], "only the watched login's change is delivered")
        XCTAssertEqual(deliveries.count, 0)
        withExtendedLifetime(watch) {}
    }

    /// Two stores on one SQLite file stand for two processes: each has its own connection, so only
    /// `PRAGMA data_version` tells one of the other's commits.
    func testAnotherProcessOnTheSameFileIsSeenWithinTheLookInterval() async throws {
        let shared = directory()
        let watching = try TokenStore(directory: shared)
        let writing = try TokenStore(directory: shared)
        let key = TokenStoreTests.key()
        let (watch, deliveries) = try await Self.aLoginWrittenByOneIsDeliveredToTheOther(watching, writing, key, profile)
        let reads = watching.profileReads.store
        let seen = try await watching.profiles([key])
        XCTAssertEqual(seen.map(\.1), [profile], "memory holds what the other process wrote")
        XCTAssertEqual(watching.profileReads.store, reads)

        try await writing.deleteProfile(key)
        XCTAssertEqual(deliveries.next(), [key.login])
        let after = try await watching.profiles([key])
        XCTAssertTrue(after.isEmpty)
        withExtendedLifetime(watch) {}
    }

    /// How many logins a look reads when the database says nothing changed.
    static func readsOfALookThatFindsNothingNew(_ feed: LoginFeed) -> Int {
        var reads = 0
        XCTAssertNoThrow(
            try feed.look(
                changes: { .none },
                read: { _ in
                    reads += 1
                    return [:]
                }))
        return reads
    }

    /// One look: asks what changed, reads those logins again and tells their watchers; a failed ask or read makes
    /// it false. (What a read brings along is the worker's to look for: `StoreDatabase.changesWaiting`.)
    func testALookReadsWhatChangedOnceAndAFailureEndsIt() {
        let feed = LoginFeed()
        let key = TokenStoreTests.key()
        let deliveries = Deliveries()
        let watch = feed.add([key.login], deliveries.deliver)
        XCTAssertTrue(feed.looking())
        var answers: [ExternalChanges] = [.unknown, .some([.login(key.login)])]
        var stored: [[String: StoredProfile]] = [["MockMVPD": profile], [:]]
        XCTAssertNoThrow(try feed.look(changes: { answers.removeFirst() }, read: { _ in stored.removeFirst() }))
        XCTAssertEqual(answers.count, 1, "asked once")
        XCTAssertEqual(deliveries.next(timeout: 0), [key.login])
        XCTAssertNoThrow(try feed.look(changes: { answers.removeFirst() }, read: { _ in stored.removeFirst() }))
        XCTAssertEqual(deliveries.next(timeout: 0), [key.login], "the logout is told too")
        XCTAssertEqual(Self.readsOfALookThatFindsNothingNew(feed), 0, "nothing changed, nothing read")
        struct Away: Error {}
        XCTAssertThrowsError(try feed.look(changes: { throw Away() }, read: { _ in [:] }))
        XCTAssertThrowsError(try feed.look(changes: { .unknown }, read: { _ in throw Away() }))
        withExtendedLifetime(watch) {}
    }

    /// A look whose read fails keeps what it was to read: the database will not tell it again, and the next look,
    /// to which it says nothing new, reads it. Before, the change was lost (a breaking pass: a lock held past the
    /// statement timeout during another daemon's logout left the watcher's host told "logged in" for good).
    func testWhatAFailedReadWasToReadIsReadByTheNextLook() {
        let feed = LoginFeed()
        let key = TokenStoreTests.key()
        let deliveries = Deliveries()
        let watch = feed.add([key.login], deliveries.deliver)
        XCTAssertNoThrow(try feed.look(changes: { .unknown }, read: { _ in ["MockMVPD": profile] }))
        XCTAssertEqual(deliveries.next(timeout: 0), [key.login])
        struct Timeout: Error {}
        XCTAssertThrowsError(try feed.look(changes: { .some([.login(key.login)]) }, read: { _ in throw Timeout() }))
        XCTAssertNil(deliveries.next(timeout: 0))
        XCTAssertNoThrow(try feed.look(changes: { .none }, read: { _ in [:] }))
        XCTAssertEqual(deliveries.next(timeout: 0), [key.login], "the logout is told")
        XCTAssertEqual(Self.readsOfALookThatFindsNothingNew(feed), 0, "read once, then forgotten")
        withExtendedLifetime(watch) {}
    }

    /// Two stores on one SQLite file, the watcher's look an hour apart: the other's login write is announced once it
    /// has committed (`LoginAnnouncement`), and the watcher's worker, waiting on its watch of the file, looks at once.
    func testAnotherProcessesAnnouncedCommitIsToldAtOnce() async throws {
        let shared = directory()
        let watching = try TokenStore(directory: shared.path, lookInterval: .seconds(3600))
        let writing = try TokenStore(directory: shared)
        let other = TokenStoreTests.key("REF2")
        let deliveries = Deliveries()
        let watch = watching.watch([other.login], deliver: deliveries.deliver)
        let before = try await watching.profiles([other])
        XCTAssertTrue(before.isEmpty)
        try await writing.saveProfile(profile, other)
        XCTAssertEqual(deliveries.next(), [other.login], "no look for an hour: only the announcement can tell it")
        withExtendedLifetime(watch) {}
    }

    /// Two stores on one SQLite file, the watcher's look an hour apart, and a writer that does not announce its
    /// commits (SQL straight into the file, as a PassBridge older than `LoginAnnouncement` writes): its commit that
    /// the watcher's own login write comes across (its change counter moved by two) is looked for before the worker
    /// sleeps, not at the next look. Before, it waited for the look's interval.
    func testAnotherProcessesCommitThatAWriteCameAcrossIsToldAtOnce() async throws {
        let shared = directory()
        let watching = try TokenStore(directory: shared.path, lookInterval: .seconds(3600))
        let own = TokenStoreTests.key("REF")
        let other = TokenStoreTests.key("REF2")
        let deliveries = Deliveries()
        let watch = watching.watch([own.login, other.login], deliver: deliveries.deliver)
        let before = try await watching.profiles([own, other])
        XCTAssertTrue(before.isEmpty)
        let unannounced = try SQLiteDatabase(path: shared.path + "/passbridge.sqlite", busyTimeoutMillis: 5000)
        try unannounced.transaction { () throws(TokenStoreError) in
            try unannounced.execute(
                "INSERT INTO profiles(backend, statement_sha256, device_id, requestor, mvpd, not_after_ms, profile) VALUES (?, ?, ?, ?, ?, ?, ?)",
                SQLiteStore.values(other) + [.integer(profile.notAfter), .text(profile.json)])
            try unannounced.execute("UPDATE login_changes SET counter = counter + 1 WHERE slot = 1")
        }
        XCTAssertNil(deliveries.next(timeout: 0.3), "no look for an hour, no announcement, and nothing else read the store")
        try await watching.saveProfile(profile, own)
        // The watcher hears its store's own write, and the other process's.
        var told: Set<LoginKey> = []
        while told.count < 2, let next = deliveries.next() { told.formUnion(next) }
        XCTAssertEqual(told, [own.login, other.login])
        let seen = try await watching.profiles([other])
        XCTAssertEqual(seen.map(\.1), [profile])
        withExtendedLifetime(watch) {}
    }

    func testNotificationPayloadsRoundTripAndUnreadableOnesMeanEverything() {
        let key = LoginKey(scope: TokenStoreTests.scope, device: "dévice\u{0}.1", requestor: "R.E.F")
        for change in [LoginChange.login(key), .requestor("R.E.F"), .everything] {
            XCTAssertEqual(LoginNotification.change(LoginNotification.payload(change)), change)
        }
        XCTAssertEqual(LoginNotification.change("Lzz"), .everything)
        XCTAssertEqual(LoginNotification.change(""), .everything)
        let huge = LoginKey(scope: TokenStoreTests.scope, device: String(repeating: "d", count: 5000), requestor: "REF")
        XCTAssertEqual(LoginNotification.change(LoginNotification.payload(.login(huge))), .requestor("REF"))
    }
}

/// The fleet's live logins: two stores on one PostgreSQL database stand for two daemons (each its own session), in
/// a database of its own on the cluster of PASSBRIDGE_TEST_POSTGRES_URL; skipped without it.
final class PostgreSQLLoginFeedTests: XCTestCase {
    private var database: PostgreSQLTestDatabase?
    private let profile = StoredProfile(json: #"{"mvpd":"MockMVPD"}"#, notAfter: 4_102_444_800_000)

    override func setUpWithError() throws { database = try PostgreSQLTestDatabase() }

    override func tearDownWithError() throws { try database?.drop() }

    /// Ends every session of the test's database but `admin`'s, as a restart or a failover does.
    private func cutEverySession() throws {
        let database = try XCTUnwrap(database)
        try database.admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = convert_from($1, 'UTF8') AND pid <> pg_backend_pid()",
            [.text(database.name)])
    }

    func testAnotherDaemonsWritesAreDeliveredAlsoAcrossALostConnection() async throws {
        let url = try XCTUnwrap(database).url
        let watching = try TokenStore(postgreSQL: url)
        let writing = try TokenStore(postgreSQL: url)
        let key = TokenStoreTests.key()
        let (watch, deliveries) = try await LoginFeedTests.aLoginWrittenByOneIsDeliveredToTheOther(watching, writing, key, profile)
        let seen = try await watching.profiles([key])
        XCTAssertEqual(seen.map(\.1), [profile])

        // The watcher's session is cut, and the logout is written while it is away: its notification is lost,
        // and the look after the reconnect reads the login again.
        try cutEverySession()
        try await writing.deleteProfile(key)
        XCTAssertEqual(deliveries.next(), [key.login])
        let after = try await watching.profiles([key])
        XCTAssertTrue(after.isEmpty)
        withExtendedLifetime(watch) {}
    }

    /// The watcher's own cache write is held by a row lock while the other daemon logs out: PostgreSQL keeps the
    /// logout's notification for the watcher's session until its transaction ends, and sends it with the COMMIT's
    /// answer, which libpq reads whole, so the socket never shows it. The worker looks after the write anyway. Before,
    /// it slept on the socket and the logout was not told (5 s, 3 runs of 3).
    func testAChangeThatArrivesWithTheAnswerToACacheWriteIsDelivered() async throws {
        let database = try XCTUnwrap(database)
        let watching = try TokenStore(postgreSQL: database.url, log: StoreQuietTests.noFailure, lookInterval: .seconds(3600))
        let writing = try TokenStore(postgreSQL: database.url)
        let key = TokenStoreTests.key()
        let (watch, deliveries) = try await LoginFeedTests.aLoginWrittenByOneIsDeliveredToTheOther(watching, writing, key, profile)

        // The locker's uncommitted row of the same key holds the watcher's upsert (and nothing else).
        let locker = try PostgreSQLDatabase(url: database.url)
        try locker.execute("BEGIN")
        try locker.execute(
            """
            INSERT INTO authorization_expiries(backend, statement_sha256, device_id, requestor, mvpd, resource, not_after_ms)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            """, SQLiteStore.values(key) + [.text("ch1"), .integer(1)])
        watching.submit { $0.setAuthorizationExpiry(4_102_444_800_000, key, resource: "ch1") }
        // Until the watcher's write waits for the lock (a session of the test's database other than the locker's).
        let waiting = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        let started = Date()
        while try locker.query(waiting, []).first?.first?.integer != 1 {
            XCTAssertLessThan(Date().timeIntervalSince(started), 10, "the cache write never waited for the lock")
            try await Task.sleep(for: .milliseconds(10))
        }
        try await writing.deleteProfile(key)
        try locker.execute("ROLLBACK")
        XCTAssertEqual(deliveries.next(), [key.login])
        let after = try await watching.profiles([key])
        XCTAssertTrue(after.isEmpty)
        withExtendedLifetime(watch) {}
    }

    /// The same for a look's own read: a notification makes the watcher read login A, which the locker's table
    /// lock holds; meanwhile the locker logs B in and notifies, and commits. The notification of B comes with the
    /// answer to the read of A, which libpq reads whole, and the worker looks again before it sleeps. Without that
    /// (one look, then the socket) B was not told.
    func testAChangeThatArrivesWithTheAnswerToALooksReadIsDelivered() async throws {
        let database = try XCTUnwrap(database)
        let watching = try TokenStore(postgreSQL: database.url, log: StoreQuietTests.noFailure, lookInterval: .seconds(3600))
        let a = TokenStoreTests.key("REF")
        let b = TokenStoreTests.key("REF2")
        let deliveries = LoginFeedTests.Deliveries()
        let watch = watching.watch([a.login, b.login], deliver: deliveries.deliver)
        let before = try await watching.profiles([a, b])
        XCTAssertTrue(before.isEmpty)
        // Until the watcher listens (the look owed by the watch has run: its worker sleeps on the socket).
        XCTAssertNotNil(StoreQuietTests.sleep(of: watching) { $0.socket })

        let locker = try PostgreSQLDatabase(url: database.url)
        let notifier = try PostgreSQLDatabase(url: database.url)
        try locker.execute("BEGIN")
        try locker.execute("LOCK TABLE profiles IN ACCESS EXCLUSIVE MODE")
        let notify = "SELECT pg_notify('\(LoginNotification.channel)', convert_from($1, 'UTF8'))"
        try notifier.execute(notify, [.text(LoginNotification.payload(.login(a.login)))])
        let waiting = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        let started = Date()
        while try notifier.query(waiting, []).first?.first?.integer != 1 {
            XCTAssertLessThan(Date().timeIntervalSince(started), 10, "the look never read login A")
            try await Task.sleep(for: .milliseconds(10))
        }
        try locker.execute(
            "INSERT INTO profiles(backend, statement_sha256, device_id, requestor, mvpd, not_after_ms, profile) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            SQLiteStore.values(b) + [.integer(profile.notAfter), .text(profile.json)])
        try locker.execute(notify, [.text(LoginNotification.payload(.login(b.login)))])
        try locker.execute("COMMIT")
        XCTAssertEqual(deliveries.next(), [b.login])
        let seen = try await watching.profiles([b])
        XCTAssertEqual(seen.map(\.1), [profile])
        withExtendedLifetime(watch) {}
    }

    /// The watcher's read of a changed login is held by a table lock past the statement timeout (5 s: a VACUUM
    /// FULL, an ALTER TABLE); its look fails, and the next one, once the lock is gone, reads the login and tells
    /// the logout. Before, the notification was spent and the logout never told.
    func testALogoutWhoseReadTimedOutIsToldOnceTheLockIsGone() async throws {
        let database = try XCTUnwrap(database)
        let watching = try TokenStore(postgreSQL: database.url)
        let writing = try TokenStore(postgreSQL: database.url)
        let key = TokenStoreTests.key()
        let (watch, deliveries) = try await LoginFeedTests.aLoginWrittenByOneIsDeliveredToTheOther(watching, writing, key, profile)
        let locker = try PostgreSQLDatabase(url: database.url)
        let other = try PostgreSQLDatabase(url: database.url)
        // The logout, written without its notification; then the lock, then the notification alone.
        try other.execute(
            "DELETE FROM profiles WHERE backend = $1 AND statement_sha256 = $2 AND device_id = $3 AND requestor = $4",
            SQLiteStore.values(key.login))
        try locker.execute("BEGIN")
        try locker.execute("LOCK TABLE profiles IN ACCESS EXCLUSIVE MODE")
        try other.execute(
            "SELECT pg_notify('\(LoginNotification.channel)', convert_from($1, 'UTF8'))",
            [.text(LoginNotification.payload(.login(key.login)))])
        // Until the watcher's read has waited for the lock and given up (its session no longer waits).
        let waiting = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        let started = Date()
        var waited = false
        while true {
            let count = try other.query(waiting, []).first?.first?.integer
            if count == 1 { waited = true }
            if waited && count == 0 { break }
            XCTAssertLessThan(Date().timeIntervalSince(started), 20, "the read never waited, or never gave up")
            try await Task.sleep(for: .milliseconds(20))
        }
        XCTAssertNil(deliveries.next(timeout: 0.2), "nothing could be read yet")
        try locker.execute("ROLLBACK")
        XCTAssertEqual(deliveries.next(), [key.login])
        let after = try await watching.profiles([key])
        XCTAssertTrue(after.isEmpty)
        withExtendedLifetime(watch) {}
    }
}
