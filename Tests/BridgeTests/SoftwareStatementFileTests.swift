import Foundation
import XCTest

@testable import Bridge

/// `--software-statement @FILE` (Backend.readSoftwareStatement): the file's trimmed text; an empty or `#` comment file (the
/// packaged unit's credential before a statement is installed) is no statement, with help saying where it goes; a file that
/// cannot be read is a start-up failure.
final class SoftwareStatementFileTests: XCTestCase {
    private func file(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("statement-\(UUID().uuidString)").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    func testAFileGivesItsTrimmedText() throws {
        XCTAssertEqual(try Backend.readSoftwareStatement("@" + file("  a.b.c\n")), "a.b.c")
        XCTAssertEqual(try Backend.readSoftwareStatement("x.y.z"), "x.y.z")
        XCTAssertNil(try Backend.readSoftwareStatement(nil))
    }

    func testAnEmptyOrCommentFileIsNoStatementAndTheHelpSaysWhereItGoes() throws {
        let path = try file(" \n")
        XCTAssertNil(try Backend.readSoftwareStatement("@" + path))
        XCTAssertNil(try Backend.readSoftwareStatement("@" + file("# no software statement yet: put it in …\n")))
        let help = Backend.emptyStatementHelp(file: path, underSystemd: true)
        XCTAssertTrue(help.hasPrefix("\(path) holds no software statement: "), help)
        XCTAssertTrue(help.contains("/etc/passbridge/software-statement"), help)
        XCTAssertTrue(help.contains("systemctl restart passbridge.service"), help)
        XCTAssertTrue(help.contains("--software-statement"), help)
        // Started by hand: no systemd advice (a fleet operator's pass was told to restart a unit it did not run).
        let byHand = Backend.emptyStatementHelp(file: path, underSystemd: false)
        XCTAssertEqual(
            byHand,
            "\(path) holds no software statement: put the one Adobe issued for the application in it, or pass "
                + "--software-statement JWT, or softwareStatement in init")
    }

    func testAFileThatCannotBeReadFailsTheStart() {
        XCTAssertThrowsError(try Backend.readSoftwareStatement("@/nonexistent/statement")) { error in
            guard case .failure(let line)? = error as? CommandLineError else { return XCTFail("not a failure: \(error)") }
            XCTAssertEqual(line, "cannot read the software statement file /nonexistent/statement: No such file or directory")
        }
    }

    /// A device or a FIFO is refused at once rather than read without end or waited on; so is a file too large to
    /// be a statement.
    func testOnlyARegularFileOfAStatementsSizeIsRead() throws {
        let fifo = NSTemporaryDirectory() + "statement-fifo-\(getpid())"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        defer { unlink(fifo) }
        let large = try file(String(repeating: "x", count: Backend.statementFileLimit + 1))
        for (path, reason) in [
            ("/dev/zero", "not a regular file"), (fifo, "not a regular file"), ("/tmp", "not a regular file"),
            (large, "65537 bytes, more than a software statement's 65536"),
        ] {
            XCTAssertThrowsError(try Backend.readSoftwareStatement("@" + path)) { error in
                guard case .failure(let line)? = error as? CommandLineError else { return XCTFail("not a failure: \(error)") }
                XCTAssertEqual(line, "cannot read the software statement file \(path): \(reason)")
            }
        }
    }
}
