import Foundation
import JSON
import JSONRPC
import XCTest

@testable import Bridge

/// `rpc.discover` returns Protocol/openrpc.json, and the daemon serves exactly the host→daemon methods the
/// document lists (DESIGN §3).
final class DiscoveryTests: XCTestCase {
    private func documentFile() throws -> (text: String, json: JSON) {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent("Protocol/openrpc.json"), encoding: .utf8)
        return (text, try JSON.parse(text))
    }

    /// Names of the document's methods the host sends (no `x-direction: daemon-to-host`).
    private func hostMethods(_ document: JSON) -> Set<String> {
        Set((document["methods"]?.arrayValue ?? []).filter { $0["x-direction"] != "daemon-to-host" }.compactMap { $0["name"]?.stringValue })
    }

    /// Sources/Bridge/OpenRPCDocument.swift as generated from the document's text.
    private func embeddedSource(for document: String) -> String {
        """
        // Generated from Protocol/openrpc.json by BridgeTests.DiscoveryTests (UPDATE_OPENRPC=1); do not edit by hand.
        import JSON

        /// The OpenRPC document `rpc.discover` returns (Protocol/openrpc.json), embedded so an installed binary
        /// needs no data files.
        public enum OpenRPC {
            /// The document text, as in Protocol/openrpc.json.
            public static let text = #\"\"\"
        \(document.trimmingCharacters(in: .newlines))
        \"\"\"#

            /// The parsed document.
            public static let document: JSON = {
                do { return try JSON.parse(text) } catch { fatalError("Protocol/openrpc.json does not parse: \\(error)") }
            }()
        }

        """
    }

    /// Keeps the embedded copy in step: `UPDATE_OPENRPC=1 swift test --filter DiscoveryTests`
    /// rewrites it after an edit of Protocol/openrpc.json.
    func testEmbeddedDocumentIsTheProtocolFile() throws {
        let expected = embeddedSource(for: try documentFile().text)
        let sourceURL = repositoryRoot.appendingPathComponent("Sources/Bridge/OpenRPCDocument.swift")
        if ProcessInfo.processInfo.environment["UPDATE_OPENRPC"] == "1" {
            try expected.write(to: sourceURL, atomically: true, encoding: .utf8)
        }
        XCTAssertEqual(try String(contentsOf: sourceURL, encoding: .utf8), expected, "run UPDATE_OPENRPC=1 swift test --filter DiscoveryTests")
        XCTAssertEqual(OpenRPC.text + "\n", try documentFile().text)
    }

    func testRPCDiscoverReturnsTheDocument() throws {
        let harness = try Harness()
        XCTAssertEqual(harness.call("rpc.discover").last, .result(RequestID(1), try documentFile().json))
    }

    func testEveryListedHostMethodIsServedAndNothingElse() throws {
        let document = try documentFile().json
        let listed = hostMethods(document)
        XCTAssertEqual(listed, Set(MethodTable.names))
        let harness = try Harness()
        for method in listed.sorted() {
            let answer = harness.call(method).last
            if case .error(_, let error)? = answer { XCTAssertNotEqual(error.code, .methodNotFound, method) }
        }
        let daemonToHost = (document["methods"]?.arrayValue ?? []).filter { $0["x-direction"] == "daemon-to-host" }
        XCTAssertEqual(daemonToHost.count, 15)
        for entry in daemonToHost {
            let method = try XCTUnwrap(entry["name"]?.stringValue)
            guard case .error(_, let error)? = harness.call(method).last else { return XCTFail(method) }
            XCTAssertEqual(error.code, .methodNotFound, method)
        }
    }

    func testDocumentDeclaresTheDaemonErrorCodes() throws {
        let errors = try XCTUnwrap(try documentFile().json["components"]?["errors"]?.objectValue)
        let codes = Set(errors.compactMap { $0.value["code"]?.int64Value })
        XCTAssertTrue(codes.isSuperset(of: [-32700, -32600, -32601, -32602, -32603, -32002, -32003, -32004]), "\(codes)")
    }
}
