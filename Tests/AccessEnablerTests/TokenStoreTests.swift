import CSQLite
import Foundation
import XCTest

@testable import AccessEnabler

final class TokenStoreTests: XCTestCase {
    func testCreatesPrivateDirectoryAndFile() throws {
        let directory = temporaryDirectory()
        let store = try TokenStore(directory: directory)
        store.set(.device, "id", "device-1")
        let manager = FileManager.default
        let dirMode = try manager.attributesOfItem(atPath: directory.path)[.posixPermissions] as? Int
        let fileMode = try manager.attributesOfItem(atPath: store.fileURL.path)[.posixPermissions] as? Int
        XCTAssertEqual(dirMode, 0o700)
        XCTAssertEqual(fileMode, 0o600)
    }

    func testTightensAnExistingDirectory() throws {
        let directory = temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        _ = try TokenStore(directory: directory)
        let mode = try FileManager.default.attributesOfItem(atPath: directory.path)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o700)
    }

    func testUsesWALAndRecordsSchemaVersion() throws {
        let directory = temporaryDirectory()
        let store = try TokenStore(directory: directory)
        var handle: OpaquePointer?
        XCTAssertEqual(sqlite3_open(store.fileURL.path, &handle), SQLITE_OK)
        defer { sqlite3_close(handle) }
        XCTAssertEqual(scalar(handle, "PRAGMA journal_mode"), "wal")
        XCTAssertEqual(scalar(handle, "PRAGMA user_version"), "1")
    }

    func testRefusesANewerSchema() throws {
        let directory = temporaryDirectory()
        let store = try TokenStore(directory: directory)
        var handle: OpaquePointer?
        sqlite3_open(store.fileURL.path, &handle)
        sqlite3_exec(handle, "PRAGMA user_version=99", nil, nil, nil)
        sqlite3_close(handle)
        XCTAssertThrowsError(try TokenStore(directory: directory)) { error in
            XCTAssertEqual(error as? TokenStoreError, .newerSchema(99))
        }
    }

    func testValuesPersistAcrossInstancesAndAreShared() throws {
        let directory = temporaryDirectory()
        let first = try TokenStore(directory: directory)
        let second = try TokenStore(directory: directory)
        first.set(.profile, "scope|REF|MockMVPD", #"{"notAfter":5}"#)
        XCTAssertEqual(second.value(.profile, "scope|REF|MockMVPD"), #"{"notAfter":5}"#)
        second.set(.profile, "scope|REF|MockMVPD", nil)
        XCTAssertNil(first.value(.profile, "scope|REF|MockMVPD"))
        first.set(.selected, "scope|REF", "MockMVPD")
        let reopened = try TokenStore(directory: directory)
        XCTAssertEqual(reopened.value(.selected, "scope|REF"), "MockMVPD")
    }

    func testFirstWriterWinsForSharedIds() throws {
        let directory = temporaryDirectory()
        let first = try TokenStore(directory: directory)
        let second = try TokenStore(directory: directory)
        XCTAssertEqual(first.setIfAbsent(.device, "id", "aaa"), "aaa")
        XCTAssertEqual(second.setIfAbsent(.device, "id", "bbb"), "aaa")
    }

    func testPrefixRemovalKeepsOtherKeys() throws {
        let store = try TokenStore(directory: temporaryDirectory())
        store.set(.preauth, "s|REF|A", "1")
        store.set(.preauth, "s|REF|B", "2")
        store.set(.preauth, "s|OTHER|A", "3")
        store.removeAll(.preauth, prefix: "s|REF|")
        XCTAssertNil(store.value(.preauth, "s|REF|A"))
        XCTAssertNil(store.value(.preauth, "s|REF|B"))
        XCTAssertEqual(store.value(.preauth, "s|OTHER|A"), "3")
        XCTAssertEqual(store.values(.preauth, prefix: "s|").map(\.key), ["s|OTHER|A"])
    }

    func testConcurrentWritersFromManyThreadsAllLand() throws {
        let directory = temporaryDirectory()
        let stores = try (0..<4).map { _ in try TokenStore(directory: directory) }
        DispatchQueue.concurrentPerform(iterations: 200) { index in
            stores[index % 4].set(.authz, "key\(index)", "\(index)")
        }
        XCTAssertEqual(stores[0].values(.authz, prefix: "key").count, 200)
    }

    private func scalar(_ handle: OpaquePointer?, _ sql: String) -> String? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else { return nil }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) else { return nil }
        return String(cString: text)
    }
}
