import XCTest

@testable import PassEmulator

/// `--host` and `--public-url`: the URL this machine reaches the emulator at, the one its pages hand out, and what
/// stdout shows (loopback alone by default).
final class ServeAddressesTests: XCTestCase {
    func testLocalAndPublicURLsForEachHostAndPublicURL() {
        let rows: [(host: String, publicURL: String?, interface: String?, local: String, public: String)] = [
            ("127.0.0.1", nil, "192.0.2.2", "http://127.0.0.1:8080", "http://127.0.0.1:8080"),
            ("0.0.0.0", nil, "192.0.2.2", "http://127.0.0.1:8080", "http://192.0.2.2:8080"),
            ("0.0.0.0", nil, nil, "http://127.0.0.1:8080", "http://127.0.0.1:8080"),
            ("192.0.2.2", nil, "192.0.2.9", "http://192.0.2.2:8080", "http://192.0.2.2:8080"),
            ("127.0.0.1", "https://tv.example/pass", "192.0.2.2", "http://127.0.0.1:8080", "https://tv.example/pass"),
            ("0.0.0.0", "http://box.local:9000", "192.0.2.2", "http://127.0.0.1:8080", "http://box.local:9000"),
        ]
        for row in rows {
            let addresses = ServeAddresses(host: row.host, port: 8080, publicURL: row.publicURL, interfaceAddress: row.interface)
            XCTAssertEqual(addresses.localURL, row.local, "\(row)")
            XCTAssertEqual(addresses.publicURL, row.public, "\(row)")
            XCTAssertEqual(addresses.stdoutLines, row.local == row.public ? row.local + "\n" : row.local + "\n" + row.public + "\n")
        }
    }

    func testPublicURLMustBeAnAbsoluteHTTPURLAndLosesItsTrailingSlash() {
        let rows: [(text: String, base: String?)] = [
            ("http://192.0.2.2:8080", "http://192.0.2.2:8080"), ("http://192.0.2.2:8080/", "http://192.0.2.2:8080"),
            ("https://tv.example/pass/", "https://tv.example/pass"), ("HTTP://tv.example", "HTTP://tv.example"),
            ("ftp://tv.example", nil), ("tv.example:8080", nil), ("/activate", nil), ("http://", nil),
            ("http://tv.example/?a=1", nil), ("http://tv.example/#top", nil), ("", nil),
        ]
        for row in rows { XCTAssertEqual(ServeAddresses.publicBase(row.text), row.base, row.text) }
    }

    func testTheFirstInterfaceAddressIsNeverLoopback() {
        if let address = ServeAddresses.firstInterfaceAddress() {
            XCTAssertFalse(address.hasPrefix("127."), address)
            XCTAssertEqual(address.split(separator: ".").count, 4, address)
        }
    }

    func testTheServerRefusesAHostThatIsNotAnIPv4Address() {
        final class Fixed: HTTPResponder {
            func respond(to request: HTTPRequest) -> HTTPResponse { .text(200, "ok\n") }
        }
        for bad in ["localhost", "::1", "300.1.1.1", ""] {
            XCTAssertThrowsError(try HTTPServer(port: 0, host: bad, responder: Fixed()), bad)
        }
    }
}
