import Foundation
import Glibc
import XCTest

@testable import PassEmulator

/// The in-process HTTP server: stopping it frees the port and every descriptor it opened.
final class HTTPServerTests: XCTestCase {
    private final class Fixed: HTTPResponder {
        func respond(to request: HTTPRequest) -> HTTPResponse { .text(200, "ok\n") }
    }

    /// The process's open descriptors but timerfds: libmicrohttpd never opens one, and libdispatch opens one
    /// lazily, at any time, for the first timer of a clock the process schedules (XCTest's own under load: the
    /// count was one more after than before, and the extra descriptor was `anon_inode:[timerfd]`).
    private func openDescriptors() throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").filter {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) != "anon_inode:[timerfd]"
        }.count
    }

    func testStopFreesThePortAndEveryDescriptor() throws {
        let before = try openDescriptors()
        var ports: [UInt16] = []
        for _ in 0..<20 {
            let server = try HTTPServer(port: 0, responder: Fixed())
            ports.append(server.port)
            server.stop()
        }
        XCTAssertEqual(try openDescriptors(), before)
        // The same port can be bound again at once: the listening socket is closed.
        let again = try HTTPServer(port: ports.last!, responder: Fixed())
        XCTAssertEqual(again.port, ports.last!)
        again.stop()
        XCTAssertEqual(try openDescriptors(), before)
    }
}
