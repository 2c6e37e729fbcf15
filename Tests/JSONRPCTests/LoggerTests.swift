import ArgumentParsing
import Glibc
import XCTest

@testable import JSONRPC

/// Log lines start with an RFC 3339 UTC timestamp, unless stderr is the journal (`JOURNAL_STREAM` naming fd 2's
/// device and inode), which stamps lines itself and reads the `<N>` priority instead.
final class LoggerTests: XCTestCase {
    /// A value a host sent (a requestor id with CR, LF or NUL) cannot end a log line or forge the next one.
    func testControlCharactersOfAMessageAreEscapedOnItsLine() {
        let line = String(
            decoding: Logger.format(.warning, label: "engine", "R EF\r\nX-Bad: 1\u{0}\u{7F}", journald: true, now: 0), as: UTF8.self)
        XCTAssertTrue(line.hasSuffix("warning engine: R EF\\u{d}\\u{a}X-Bad: 1\\u{0}\\u{7f}\n"), line)
        XCTAssertEqual(line.filter { $0 == "\n" }.count, 1)
    }

    /// NEL (U+0085) and the line and paragraph separators (U+2028, U+2029) end a line for some log readers and
    /// terminals: escaped too, while other non-ASCII text is kept.
    func testUnicodeLineBreaksOfAMessageAreEscaped() {
        let line = String(
            decoding: Logger.format(.warning, label: "engine", "é\u{85}A\u{2028}B\u{2029}C\u{9F}", journald: true, now: 0),
            as: UTF8.self)
        XCTAssertTrue(line.hasSuffix("warning engine: é\\u{85}A\\u{2028}B\\u{2029}C\\u{9f}\n"), line)
    }

    /// A backslash is doubled, so that a value holding the text `\u{a}` cannot pass for an escaped newline; invisible
    /// format characters (a right-to-left override, a zero-width space, U+FEFF) are escaped; other text is kept.
    func testABackslashAndInvisibleFormatCharactersAreEscaped() {
        let line = String(
            decoding: Logger.format(.warning, label: "engine", "a\\u{a}b\u{202E}c\u{200B}d\u{FEFF}é✓", journald: true, now: 0),
            as: UTF8.self)
        XCTAssertTrue(line.hasSuffix("warning engine: a\\\\u{a}b\\u{202e}c\\u{200b}d\\u{feff}é✓\n"), line)
        XCTAssertEqual(oneLine("plain ascii, é ✓ 😀"), "plain ascii, é ✓ 😀")
    }

    func testTimestampIsRFC3339InUTCWithMilliseconds() {
        let rows: [(millis: Int64, text: String)] = [
            (0, "1970-01-01T00:00:00.000Z"), (1, "1970-01-01T00:00:00.001Z"), (999, "1970-01-01T00:00:00.999Z"),
            (1_795_988_927_306, "2026-11-29T21:48:47.306Z"), (951_782_400_000, "2000-02-29T00:00:00.000Z"),
            (-1, "1969-12-31T23:59:59.999Z"),
        ]
        for row in rows { XCTAssertEqual(LogStream.timestamp(row.millis), row.text, "\(row.millis)") }
    }

    func testALineStartsWithItsTimeOutsideJournaldAndWithItsPriorityUnderIt() {
        let plain = String(decoding: Logger.format(.warning, label: "store", "slow", journald: false, now: 1000), as: UTF8.self)
        XCTAssertEqual(plain, "1970-01-01T00:00:01.000Z passbridge[\(getpid())] warning store: slow\n")
        let journal = String(decoding: Logger.format(.warning, label: "store", "slow", journald: true, now: 1000), as: UTF8.self)
        XCTAssertEqual(journal, "<4>passbridge[\(getpid())] warning store: slow\n")
    }

    func testJournalStreamCountsOnlyWhenItNamesTheDescriptorsDeviceAndInode() throws {
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(pipe(&ends), 0)
        defer { ends.forEach { close($0) } }
        var info = stat()
        XCTAssertEqual(fstat(ends[1], &info), 0)
        let own = "\(info.st_dev):\(info.st_ino)"
        XCTAssertTrue(LogStream.isJournal(own, fd: ends[1]))
        XCTAssertTrue(LogStream.isJournal(own, fd: ends[0]), "both ends of a pipe are one inode")
        for other in [nil, "", "8:12345", "\(info.st_dev):\(info.st_ino + 1)", "\(info.st_dev + 1):\(info.st_ino)", own + ":1", "x:y"] {
            XCTAssertFalse(LogStream.isJournal(other, fd: ends[1]), other ?? "unset")
        }
        XCTAssertFalse(LogStream.isJournal(own, fd: -1), "a closed descriptor is not the journal")
    }
}
