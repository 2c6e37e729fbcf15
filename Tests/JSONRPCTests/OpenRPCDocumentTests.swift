import Foundation
import JSON
import XCTest

/// `rpc.discover` serves `Protocol/openrpc.json`, embedded in `Sources/passbridge/OpenRPCDocument.swift`
/// as a string literal (installed binaries carry no data files). This test keeps the two in step:
/// run `UPDATE_OPENRPC=1 swift test --filter OpenRPCDocumentTests` after editing the JSON file.
final class OpenRPCDocumentTests: XCTestCase {
    private let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    private func embeddedSource(for document: String) -> String {
        """
        // Generated from Protocol/openrpc.json by OpenRPCDocumentTests (UPDATE_OPENRPC=1); do not edit by hand.
        import JSON

        /// The OpenRPC document `rpc.discover` returns, embedded so an installed binary needs no data files.
        enum OpenRPCDocument {
            static let text = #\"\"\"
        \(document.trimmingCharacters(in: .newlines))
        \"\"\"#

            /// The document as a JSON value (parsed once).
            static let json: JSON = {
                do {
                    return try JSON.parse(text)
                } catch {
                    fatalError("embedded OpenRPC document is not JSON: \\(error)")
                }
            }()
        }

        """
    }

    func testEmbeddedDocumentMatchesProtocolFile() throws {
        let document = try String(contentsOf: root.appendingPathComponent("Protocol/openrpc.json"), encoding: .utf8)
        XCTAssertNoThrow(try JSON.parse(document))
        let sourceURL = root.appendingPathComponent("Sources/passbridge/OpenRPCDocument.swift")
        let expected = embeddedSource(for: document)
        if ProcessInfo.processInfo.environment["UPDATE_OPENRPC"] == "1" {
            try expected.write(to: sourceURL, atomically: true, encoding: .utf8)
        }
        let actual = try String(contentsOf: sourceURL, encoding: .utf8)
        XCTAssertEqual(actual, expected, "run UPDATE_OPENRPC=1 swift test --filter OpenRPCDocumentTests, then rebuild")
    }

    func testBinaryServesTheDocument() throws {
        let document = try JSON.parse(try String(contentsOf: root.appendingPathComponent("Protocol/openrpc.json"), encoding: .utf8))
        let binary = Bundle.main.bundleURL.appendingPathComponent("passbridge")
        let process = Process()
        process.executableURL = binary
        process.arguments = ["--stdio"]
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
