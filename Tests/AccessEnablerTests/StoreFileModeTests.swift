import Foundation
import XCTest

@testable import AccessEnabler

/// The store file rule (`StoreFileRule`): what the daemon finds of its own files in an existing state directory.
final class StoreFileModeTests: XCTestCase {
    let names = ["passbridge.sqlite", "passbridge.sqlite-wal", "passbridge.sqlite-shm", "passbridge.sqlite-journal"]

    func testStoreFilesLeftReadableByOthersAreMade0600AndTheStoreStillOpens() async throws {
        let directory = try await closedStore(directoryMode: 0o755)
        for name in names { try touch(directory, name, mode: 0o644) }
        XCTAssertEqual(try names.map { try mode(directory, $0) }, [0o644, 0o644, 0o644, 0o644])

        let store = try TokenStore(directory: directory)
        _ = try await store.deviceIdentity()
        XCTAssertEqual(try names.map { try mode(directory, $0) }, [0o600, 0o600, 0o600, 0o600])
        XCTAssertEqual(try mode(directory.path), 0o755, "the directory is never chmod'ed")
    }

    /// SQLite gives the `-wal` and `-shm` files it creates the main file's mode, whatever the umask: with the
    /// process umask 000 and SQLite's default of 0644 they would otherwise be 0644.
    func testNewWALAndSharedMemoryFilesTakeThePrivateModeOfTheDatabase() async throws {
        let directory = try await closedStore(directoryMode: 0o700)
        XCTAssertEqual(try mode(directory, "passbridge.sqlite"), 0o600)
        XCTAssertFalse(exists(directory, "passbridge.sqlite-wal"))
        let previous = umask(0)
        defer { umask(previous) }
        let store = try TokenStore(directory: directory)
        _ = try await store.reset()
        XCTAssertEqual(try mode(directory, "passbridge.sqlite-wal"), 0o600)
        XCTAssertEqual(try mode(directory, "passbridge.sqlite-shm"), 0o600)
    }

    func testAStoreFileOfAnotherUserIsRefusedWithTheCommandToRun() async throws {
        try XCTSkipUnless(geteuid() == 0, "needs root to give a file to another user (uid 65534)")
        for name in ["passbridge.sqlite", "passbridge.sqlite-wal"] {
            let directory = try await closedStore(directoryMode: 0o700)
            try touch(directory, name, mode: 0o644)
            let file = directory.appendingPathComponent(name).path
            XCTAssertEqual(chown(file, 65534, 65534), 0)
            XCTAssertThrowsError(try TokenStore(directory: directory)) { error in
                guard case .unsafeStoreFile(let path, let reason) = error as? TokenStoreError else { return XCTFail("\(error)") }
                XCTAssertEqual(path, file)
                XCTAssertTrue(reason.contains("owned by uid 65534") && reason.contains("chown 0 \(file)"), reason)
            }
            XCTAssertEqual(try mode(file), 0o644, "a refused file is left as it is")
        }
    }

    func testASymbolicLinkInPlaceOfTheDatabaseIsRefusedAndItsTargetLeftAlone() async throws {
        let elsewhere = try await closedStore(directoryMode: 0o700)
        let target = elsewhere.appendingPathComponent("passbridge.sqlite").path
        XCTAssertEqual(chmod(target, 0o644), 0)
        for pointee in [target, elsewhere.appendingPathComponent("missing").path] {
            let directory = temporaryDirectory()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(
                atPath: directory.appendingPathComponent("passbridge.sqlite").path, withDestinationPath: pointee)
            XCTAssertThrowsError(try TokenStore(directory: directory)) { error in
                guard case .unsafeStoreFile(let path, let reason) = error as? TokenStoreError else { return XCTFail("\(error)") }
                XCTAssertEqual(path, directory.appendingPathComponent("passbridge.sqlite").path)
                XCTAssertTrue(reason.contains("symbolic link"), reason)
            }
        }
        XCTAssertEqual(try mode(target), 0o644, "the link's target is never chmod'ed")
        XCTAssertFalse(exists(elsewhere, "missing"), "nor created")
    }

    func testAFIFOInPlaceOfTheWALIsRefused() async throws {
        let directory = try await closedStore(directoryMode: 0o700)
        let file = directory.appendingPathComponent("passbridge.sqlite-wal").path
        XCTAssertEqual(mkfifo(file, 0o644), 0)
        XCTAssertThrowsError(try TokenStore(directory: directory)) { error in
            XCTAssertEqual(error as? TokenStoreError, .unsafeStoreFile(path: file, reason: "it is not a regular file; remove it"))
        }
    }

    func testVerifyRefusesAFileOthersCanRead() async throws {
        let directory = try await closedStore(directoryMode: 0o700)
        let file = directory.appendingPathComponent("passbridge.sqlite").path
        XCTAssertNoThrow(try StoreFileRule.verify(file))
        XCTAssertEqual(chmod(file, 0o640), 0)
        XCTAssertThrowsError(try StoreFileRule.verify(file)) { error in
            XCTAssertEqual(error as? TokenStoreError, .unsafeStoreFile(path: file, reason: "it is mode 0640 after opening, not 0600"))
        }
    }

    func testPathsInMessagesAreOneShellWord() {
        XCTAssertEqual(StoreFileRule.quoted("/var/lib/passbridge/passbridge.sqlite"), "/var/lib/passbridge/passbridge.sqlite")
        XCTAssertEqual(StoreFileRule.quoted("/tmp/my state/it's"), "'/tmp/my state/it'\\''s'")
        XCTAssertEqual(StoreFileRule.quoted("/tmp/$(x)"), "'/tmp/$(x)'")
    }

    // MARK: helpers

    /// A state directory of mode `directoryMode` holding a store that was written to and closed (SQLite removes
    /// the `-wal` and `-shm` files when its last connection closes; that is waited for).
    private func closedStore(directoryMode: Int) async throws -> URL {
        let directory = temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        XCTAssertEqual(chmod(directory.path, mode_t(directoryMode)), 0)
        do {
            let store = try TokenStore(directory: directory)
            _ = try await store.deviceIdentity()
        }
        let deadline = Date().addingTimeInterval(10)
        while exists(directory, "passbridge.sqlite-wal"), Date() < deadline { usleep(10_000) }
        XCTAssertFalse(exists(directory, "passbridge.sqlite-wal"), "the store did not close")
        return directory
    }

    /// Creates `name` (empty) when missing, then sets its mode.
    private func touch(_ directory: URL, _ name: String, mode: Int) throws {
        let path = directory.appendingPathComponent(name).path
        if !exists(directory, name) { XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: nil)) }
        XCTAssertEqual(chmod(path, mode_t(mode)), 0)
    }

    private func exists(_ directory: URL, _ name: String) -> Bool {
        var info = stat()
        return lstat(directory.appendingPathComponent(name).path, &info) == 0
    }

    private func mode(_ directory: URL, _ name: String) throws -> Int {
        try mode(directory.appendingPathComponent(name).path)
    }

    private func mode(_ path: String) throws -> Int {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return Int(info.st_mode & 0o7777)
    }
}
