import Foundation
import JSON
import XCTest

/// The real binary answers `rpc.discover` over stdio with `Protocol/openrpc.json` (compiled into the Bridge
/// module at build time by the EmbedOpenRPC plugin).
final class OpenRPCDocumentTests: XCTestCase {
    private let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func testBinaryServesTheDocument() throws {
        let document = try JSON.parse(try String(contentsOf: root.appendingPathComponent("Protocol/openrpc.json"), encoding: .utf8))
        let binary = Bundle.main.bundleURL.appendingPathComponent("passbridge")
        let process = Process()
        process.executableURL = binary
        process.arguments = ["--stdio", "--state-dir", NSTemporaryDirectory() + "passbridge-discover-\(getpid())"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(#"{"jsonrpc":"2.0","method":"rpc.discover","id":1}"#.utf8 + [10]))
        try input.fileHandleForWriting.close()
        let reply = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let response = try JSON.parse(Array(reply))
        XCTAssertEqual(response["result"], document)
        XCTAssertEqual(response["result"]?["openrpc"]?.stringValue?.hasPrefix("1."), true)
    }
}
