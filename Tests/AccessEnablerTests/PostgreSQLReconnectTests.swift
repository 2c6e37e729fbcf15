import Foundation
import Synchronization
import XCTest

@testable import AccessEnabler

/// The fleet store over a connection the server ended (`PostgreSQLDatabase.withReconnect`): against the cluster
/// of PASSBRIDGE_TEST_POSTGRES_URL (`.ci/run` and `Tests/postgres-cluster.sh start` export it), each test in a
/// database of its own; skipped without it.
final class PostgreSQLReconnectTests: XCTestCase {
    private var database: PostgreSQLTestDatabase?
    private var admin: PostgreSQLDatabase { database!.admin }
    private var url: String { database!.url }
    private let lines = LogLines()

    override func setUpWithError() throws { database = try PostgreSQLTestDatabase() }

    override func tearDownWithError() throws { try database?.drop() }

    private func store() throws -> PostgreSQLStore {
        try PostgreSQLStore(url: url) { [lines] _, line in lines.append(line()) }
    }

    /// Ends `database`'s session from another connection, as a restart or a failover does, and waits until it is gone.
    private func terminate(_ database: PostgreSQLDatabase) throws {
        let pid = try XCTUnwrap(database.query("SELECT pg_backend_pid()::bigint", []).first?.first?.integer)
        try admin.execute("SELECT pg_terminate_backend($1::integer)", [.integer(pid)])
        for _ in 0..<500 {
            if try admin.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1::integer", [.integer(pid)]).isEmpty { return }
            usleep(10_000)
        }
        XCTFail("backend \(pid) still there")
    }

    func testAReadAfterTheServerEndedTheConnectionReconnectsAndSucceeds() throws {
        let store = try store()
        let key = TokenStoreTests.key()
        try store.saveProfile(StoredProfile(json: "{}", notAfter: 42), key)
        try terminate(store.database)
        XCTAssertEqual(try store.profiles(key.login)[key.mvpd]?.notAfter, 42)
        XCTAssertEqual(lines.all.count, 1)
        XCTAssertTrue(lines.all[0].contains("connection lost during profiles ("), lines.all[0])
        XCTAssertTrue(lines.all[0].hasSuffix("reconnected, running it again"), lines.all[0])
    }

    func testAClaimWhoseCommitWasNeverSentRunsAgain() throws {
        let store = try store()
        try terminate(store.database)
        XCTAssertTrue(try store.claimTokenRefresh(TokenStoreTests.scope, seen: "", now: 1, until: 2))
        XCTAssertEqual(lines.all.count, 1)
    }

    /// The fleet's refresh lease, as TokenStoreTests checks SQLite's.
    func testARefreshLeaseGivenBackCanBeTakenAgainAtOnce() throws {
        let store = try store()
        let scope = TokenStoreTests.scope
        XCTAssertTrue(try store.claimTokenRefresh(scope, seen: "", now: 1_000, until: 11_000))
        XCTAssertFalse(try store.claimTokenRefresh(scope, seen: "", now: 2_000, until: 12_000))
        try store.releaseTokenRefresh(scope, until: 10_999)
        XCTAssertFalse(try store.claimTokenRefresh(scope, seen: "", now: 2_000, until: 12_000))
        try store.releaseTokenRefresh(scope, until: 11_000)
        XCTAssertTrue(try store.claimTokenRefresh(scope, seen: "", now: 2_000, until: 12_000))
    }

    /// A deferred trigger ends the session during its first COMMIT only (a sequence is not rolled back): the
    /// client cannot know whether that COMMIT took effect.
    func testAConnectionLostWithTheCommitInFlightRunsAgainOnlyAnIdempotentOperation() throws {
        let store = try store()
        let database = store.database
        try database.execute("CREATE TABLE probe (n integer)")
        try database.execute("CREATE SEQUENCE commits")
        try database.execute(
            """
            CREATE FUNCTION end_first_commit() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN IF nextval('commits') = 1 THEN PERFORM pg_terminate_backend(pg_backend_pid()); END IF; RETURN NULL; END $$
            """)
        try database.execute(
            """
            CREATE CONSTRAINT TRIGGER at_commit AFTER INSERT ON probe DEFERRABLE INITIALLY DEFERRED
            FOR EACH ROW EXECUTE FUNCTION end_first_commit()
            """)
        for (replay, expectedRuns) in [(PostgreSQLDatabase.Replay.untilCommitSent, 1), (.idempotent, 2)] {
            try database.withReconnect(.idempotent) { () throws(TokenStoreError) in
                try database.execute("ALTER SEQUENCE commits RESTART")
            }
            var runs = 0
            let result = Result { () throws(TokenStoreError) in
                try database.withReconnect(replay) { () throws(TokenStoreError) in
                    runs += 1
                    try database.transaction { () throws(TokenStoreError) in try database.execute("INSERT INTO probe VALUES (1)") }
                }
            }
            XCTAssertEqual(runs, expectedRuns, "\(replay)")
            switch replay {
            case .untilCommitSent: XCTAssertThrowsError(try result.get(), "\(replay)")
            case .idempotent: XCTAssertNoThrow(try result.get(), "\(replay)")
            }
        }
    }
}

/// Log lines received from the store's thread.
private final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}
