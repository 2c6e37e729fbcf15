import CSQLite
import Foundation
import XCTest

@testable import AccessEnabler

final class TokenStoreTests: XCTestCase {
    let scope = TokenStoreTests.scope
    static let scope = StoreScope(backend: "http://127.0.0.1:9", statementSHA256: String(repeating: "a", count: 64))

    func key(_ requestor: String = "REF", _ mvpd: String = "MockMVPD", device: String = "device-1") -> ProfileKey {
        Self.key(requestor, mvpd, device: device)
    }

    static func key(_ requestor: String = "REF", _ mvpd: String = "MockMVPD", device: String = "device-1") -> ProfileKey {
        ProfileKey(login: LoginKey(scope: Self.scope, device: device, requestor: requestor), mvpd: mvpd)
    }

    func testCreatesPrivateDirectoryAndFile() async throws {
        let directory = temporaryDirectory()
        let store = try TokenStore(directory: directory)
        _ = try await store.deviceIdentity()
        XCTAssertEqual(try mode(directory.path), 0o700)
        XCTAssertEqual(try mode(store.location), 0o600)
    }

    func testUsesAnExistingPrivateDirectoryAsItIs() throws {
        let directory = temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        _ = try TokenStore(directory: directory)
        XCTAssertEqual(try mode(directory.path), 0o755, "a directory the daemon did not create is never chmod'ed")
    }

    func testRefusesADirectoryOthersCanWriteAndLeavesItAlone() throws {
        for permissions in [0o1777, 0o775, 0o757] {
            let directory = temporaryDirectory()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            chmod(directory.path, mode_t(permissions))
            XCTAssertThrowsError(try TokenStore(directory: directory)) { error in
                guard case .unsafeDirectory(let path, _) = error as? TokenStoreError else { return XCTFail("\(error)") }
                XCTAssertEqual(path, directory.path)
            }
            XCTAssertEqual(try mode(directory.path), permissions)
            XCTAssertFalse(FileManager.default.fileExists(atPath: directory.appendingPathComponent("passbridge.sqlite").path))
        }
    }

    func testRefusesADirectoryOfAnotherUser() throws {
        try XCTSkipUnless(geteuid() == 0, "needs root to give the directory away")
        let directory = temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        chown(directory.path, 65534, 65534)
        XCTAssertThrowsError(try TokenStore(directory: directory)) { error in
            guard case .unsafeDirectory = error as? TokenStoreError else { return XCTFail("\(error)") }
        }
    }

    func testUsesWALAndRecordsSchemaVersion() async throws {
        let store = try TokenStore(directory: temporaryDirectory())
        _ = try await store.deviceIdentity()
        XCTAssertEqual(scalar(store.location, "PRAGMA journal_mode"), "wal")
        XCTAssertEqual(scalar(store.location, "PRAGMA user_version"), String(SQLiteMigrations.latest))
        XCTAssertEqual(
            scalar(
                store.location, "SELECT group_concat(name, ' ') FROM (SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name)"),
            "access_tokens authorization_expiries client_credentials device_identity login_changes profiles selected_providers")
    }

    /// The database is opened by the first call, which fails on a newer schema (and so does the next one: each
    /// call tries to open it again); the file is left as it was.
    func testRefusesANewerSchema() async throws {
        let store = try TokenStore(directory: temporaryDirectory())
        _ = try await store.deviceIdentity()
        execute(store.location, "PRAGMA user_version=99")
        let reopened = try TokenStore(directory: URL(fileURLWithPath: store.location).deletingLastPathComponent())
        for _ in 0..<2 {
            do {
                _ = try await reopened.deviceIdentity()
                XCTFail("a newer schema was opened")
            } catch {
                XCTAssertEqual(error as? TokenStoreError, .newerSchema(99))
            }
        }
        XCTAssertEqual(scalar(store.location, "PRAGMA user_version"), "99")
    }

    /// Making a store opens no database: the directory is checked, the file appears with the first call.
    func testOpensTheDatabaseWithTheFirstCall() async throws {
        let directory = temporaryDirectory()
        let store = try TokenStore(directory: directory)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), [])
        let device = try await store.deviceIdentity()
        XCTAssertTrue(FileManager.default.fileExists(atPath: store.location))
        let again = try await store.deviceIdentity()
        XCTAssertEqual(device, again)
    }

    /// The key-value layout (schema 1) is upgraded in place: device id, credentials, token, profile, selection.
    func testUpgradesTheKeyValueLayout() async throws {
        let directory = temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let path = directory.appendingPathComponent("passbridge.sqlite").path
        let legacy = scope.backend + "|" + scope.statementSHA256
        execute(
            path,
            """
            PRAGMA journal_mode=WAL;
            CREATE TABLE kv (ns TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (ns, key));
            INSERT INTO kv VALUES ('device', 'id', 'device-9');
            INSERT INTO kv VALUES ('credentials', '\(legacy)', '{"client_id":"c1","client_secret":"s1"}');
            INSERT INTO kv VALUES ('credentials', '\(legacy)|token', '{"access_token":"t1","expires":99}');
            INSERT INTO kv VALUES ('profile', '\(legacy)|REF|MockMVPD', '{"notAfter":1234,"issuer":"MockMVPD"}');
            INSERT INTO kv VALUES ('selected', '\(legacy)|REF', 'MockMVPD');
            INSERT INTO kv VALUES ('preauth', '\(legacy)|REF|MockMVPD', '{"ch1":true}');
            PRAGMA user_version=1;
            """)
        let store = try TokenStore(directory: directory)
        let device = try await store.deviceIdentity()
        XCTAssertEqual(device, "device-9")
        let credentials = try await store.clientCredentials(scope)
        XCTAssertEqual(credentials, ClientCredentials(id: "c1", secret: "s1"))
        let token = try await store.accessToken(scope)
        XCTAssertEqual(token, AccessTokenRecord(clientID: "c1", token: "t1", expires: 99))
        let profiles = try await store.profiles([key(device: "device-9")])
        XCTAssertEqual(profiles.first?.1, StoredProfile(json: #"{"notAfter":1234,"issuer":"MockMVPD"}"#, notAfter: 1234))
        let selected = try await store.selectedProvider(LoginKey(scope: scope, device: "device-9", requestor: "REF"))
        XCTAssertEqual(selected, "MockMVPD")
        XCTAssertNil(scalar(path, "SELECT name FROM sqlite_master WHERE name = 'kv'"), "the key-value table is gone")
    }

    func testStringsRoundTripByteForByte() async throws {
        let store = try TokenStore(directory: temporaryDirectory())
        let mrss = "<rss><channel><title>" + String(repeating: "é𝄞\u{0}", count: 1700) + "</title></channel></rss>"
        XCTAssertGreaterThan(mrss.utf8.count, 10_000)
        let names = ["ch1\u{0}zz", "Télé", "𝄞🎬", "", mrss]
        for name in names {
            let profileKey = key(name, name)
            try await store.saveProfile(StoredProfile(json: name, notAfter: 5), profileKey)
            try await store.executor.run { try $0.setAuthorizationExpiry(7, profileKey, resource: name) }
        }
        for name in names {
            let profileKey = key(name, name)
            let profiles = try await store.profiles([profileKey])
            XCTAssertEqual(profiles.first?.1.json, name)
            XCTAssertEqual(profiles.first?.0, profileKey)
            let expiry = try await store.authorizationExpiry(profileKey, resource: name)
            XCTAssertEqual(expiry, 7)
        }
        let all = try await store.logins()
        XCTAssertEqual(Set(all.map(\.requestor)), Set(names))
    }

    /// No prefixes: `Mock` is not a prefix of `MockMVPD`, `ch1` not of `ch1\0zz`, and non-ASCII keys match.
    func testKeysAreExact() async throws {
        let store = try TokenStore(directory: temporaryDirectory())
        for (requestor, mvpd) in [("REF", "Mock"), ("REF", "MockMVPD"), ("Télé", "Câble"), ("Télé", "Câble2")] {
            try await store.saveProfile(StoredProfile(json: mvpd, notAfter: 1), key(requestor, mvpd))
            try await store.executor.run { try $0.setAuthorizationExpiry(11, Self.key(requestor, mvpd), resource: "ch1") }
        }
        try await store.executor.run { try $0.setAuthorizationExpiry(22, Self.key("REF", "MockMVPD"), resource: "ch1\u{0}zz") }
        let plain = try await store.authorizationExpiry(key("REF", "MockMVPD"), resource: "ch1")
        XCTAssertEqual(plain, 11)
        let withNUL = try await store.authorizationExpiry(key("REF", "MockMVPD"), resource: "ch1\u{0}zz")
        XCTAssertEqual(withNUL, 22)
        let unknown = try await store.authorizationExpiry(key("REF", "MockMVPD"), resource: "ch1\u{0}")
        XCTAssertNil(unknown)

        try await store.deleteProfile(key("REF", "Mock"))
        try await store.deleteProfile(key("Télé", "Câble"))
        let left = try await store.logins().map { "\($0.requestor)/\($0.mvpd)" }
        XCTAssertEqual(left.sorted(), ["REF/MockMVPD", "Télé/Câble2"])
        let gone = try await store.authorizationExpiry(key("Télé", "Câble"), resource: "ch1")
        XCTAssertNil(gone, "a non-ASCII profile's authorization expiries go with it")
        let kept = try await store.authorizationExpiry(key("Télé", "Câble2"), resource: "ch1")
        XCTAssertEqual(kept, 11)
        // A cache write that comes after its login was deleted (a write that waited for another process's lock
        // while that process logged the user out) does not bring an expiry back for it.
        try await store.executor.run { try $0.setAuthorizationExpiry(33, Self.key("Télé", "Câble"), resource: "ch1") }
        let late = try await store.authorizationExpiry(key("Télé", "Câble"), resource: "ch1")
        XCTAssertNil(late, "no expiry without its profile")
    }

    func testFirstWriterWinsForSharedIds() async throws {
        let directory = temporaryDirectory()
        let first = try TokenStore(directory: directory)
        let second = try TokenStore(directory: directory)
        let a = try await first.deviceIdentity()
        let b = try await second.deviceIdentity()
        XCTAssertEqual(a, b)
        let winner = try await first.insertClientCredentials(ClientCredentials(id: "c1", secret: "s1"), scope)
        let loser = try await second.insertClientCredentials(ClientCredentials(id: "c2", secret: "s2"), scope)
        XCTAssertEqual(winner, ClientCredentials(id: "c1", secret: "s1"))
        XCTAssertEqual(loser, winner)
    }

    /// A refresh lease is held until it runs out or its holder gives it back; giving back a lease taken again
    /// since (another `until`) leaves that one alone.
    func testARefreshLeaseGivenBackCanBeTakenAgainAtOnce() async throws {
        let store = try TokenStore(directory: temporaryDirectory())
        let claimed = try await store.claimTokenRefresh(scope, seen: "", now: 1_000, until: 11_000)
        XCTAssertTrue(claimed)
        let whileHeld = try await store.claimTokenRefresh(scope, seen: "", now: 2_000, until: 12_000)
        XCTAssertFalse(whileHeld)
        try await store.releaseTokenRefresh(scope, until: 10_999)
        let afterAnotherRelease = try await store.claimTokenRefresh(scope, seen: "", now: 2_000, until: 12_000)
        XCTAssertFalse(afterAnotherRelease)
        try await store.releaseTokenRefresh(scope, until: 11_000)
        let afterRelease = try await store.claimTokenRefresh(scope, seen: "", now: 2_000, until: 12_000)
        XCTAssertTrue(afterRelease)
    }

    /// A write that cannot get the lock fails (thrown), and what was stored stays.
    func testAWriteBlockedByAnotherProcessThrows() async throws {
        let directory = temporaryDirectory()
        let store = try TokenStore(directory: directory, busyTimeout: .milliseconds(200))
        try await store.saveProfile(StoredProfile(json: "kept", notAfter: 1), key())
        var handle: OpaquePointer?
        XCTAssertEqual(sqlite3_open(store.location, &handle), SQLITE_OK)
        defer { sqlite3_close(handle) }
        XCTAssertEqual(sqlite3_exec(handle, "BEGIN IMMEDIATE", nil, nil, nil), SQLITE_OK)
        do {
            try await store.deleteProfile(key())
            XCTFail("the delete reported success while another process held the write lock")
        } catch {
            XCTAssertEqual(error as? TokenStoreError, .sqlite(operation: "step", code: SQLITE_BUSY))
        }
        let read = try await store.profiles([key()])
        XCTAssertEqual(read.first?.1.json, "kept", "reads go on under another writer's lock (WAL)")
        sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
    }

    func testConcurrentWritersFromManyThreadsAllLand() async throws {
        let directory = temporaryDirectory()
        let stores = try (0..<4).map { _ in try TokenStore(directory: directory) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    try await stores[index % 4].saveProfile(StoredProfile(json: "\(index)", notAfter: 1), Self.key("R\(index)"))
                }
            }
            try await group.waitForAll()
        }
        let count = try await stores[0].logins().count
        XCTAssertEqual(count, 200)
    }

    /// Two connections opening a new file together: SQLite's busy handler does not wait for `PRAGMA
    /// journal_mode=WAL` (its deadlock case), so the store waits itself, for its busy timeout, while another
    /// connection holds the file's write lock, and opens the file with the next call once that is let go. The
    /// lower bound on the time is what fails without that wait: SQLite refuses at once.
    func testOpeningANewFileWaitsItsBusyTimeoutForAnotherWriter() async throws {
        let store = try TokenStore(directory: temporaryDirectory(), busyTimeout: .milliseconds(300))
        var other: OpaquePointer?
        XCTAssertEqual(sqlite3_open(store.location, &other), SQLITE_OK)
        defer { sqlite3_close(other) }
        XCTAssertEqual(chmod(store.location, 0o600), 0)
        XCTAssertEqual(sqlite3_exec(other, "BEGIN IMMEDIATE; CREATE TABLE other (x)", nil, nil, nil), SQLITE_OK)
        let start = ContinuousClock.now
        do {
            _ = try await store.deviceIdentity()
            XCTFail("the store was opened while another connection held the write lock")
        } catch TokenStoreError.sqlite(_, let code) {
            XCTAssertEqual(code & 0xFF, SQLITE_BUSY)
        }
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - start, .milliseconds(300))
        XCTAssertEqual(sqlite3_exec(other, "COMMIT", nil, nil, nil), SQLITE_OK)
        _ = try await store.deviceIdentity()
        XCTAssertEqual(scalar(store.location, "PRAGMA journal_mode"), "wal")
    }

    private func mode(_ path: String) throws -> Int {
        try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    private func execute(_ path: String, _ sql: String) {
        var handle: OpaquePointer?
        XCTAssertEqual(sqlite3_open(path, &handle), SQLITE_OK)
        defer { sqlite3_close(handle) }
        XCTAssertEqual(sqlite3_exec(handle, sql, nil, nil, nil), SQLITE_OK, String(cString: sqlite3_errmsg(handle)))
    }

    private func scalar(_ path: String, _ sql: String) -> String? {
        var handle: OpaquePointer?
        guard sqlite3_open(path, &handle) == SQLITE_OK else { return nil }
        defer { sqlite3_close(handle) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else { return nil }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) else { return nil }
        return String(cString: text)
    }
}
