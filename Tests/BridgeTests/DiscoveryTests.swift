import Foundation
import JSON
import JSONRPC
import XCTest

@testable import Bridge

/// `rpc.discover` returns Protocol/openrpc.json, and the daemon serves exactly the host→daemon methods the
/// document lists.
final class DiscoveryTests: XCTestCase {
    private func documentFile() throws -> (text: String, json: JSON) {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent("Protocol/openrpc.json"), encoding: .utf8)
        return (text, try JSON.parse(text))
    }

    /// Names of the document's methods the host sends (no `x-direction: daemon-to-host`).
    private func hostMethods(_ document: JSON) -> Set<String> {
        Set((document["methods"]?.arrayValue ?? []).filter { $0["x-direction"] != "daemon-to-host" }.compactMap { $0["name"]?.stringValue })
    }

    /// The bytes compiled in by the EmbedOpenRPC plugin are the file's document minified, and the param names
    /// come from the same document (Tests/python/test_bridge_daemon.py checks the served bytes against Python's
    /// `json.dumps`).
    func testCompiledDocumentIsTheProtocolFileMinified() throws {
        let document = try documentFile().json
        XCTAssertEqual(OpenRPC.compactText, document.serialized())
        XCTAssertFalse(OpenRPC.compactText.contains(UInt8(ascii: "\n")))
        XCTAssertEqual(Set(OpenRPC.paramNames.keys), hostMethods(document))
        let setRequestor = document["methods"]?.arrayValue?.first { $0["name"] == "setRequestor" }
        let names = (setRequestor?["params"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
        XCTAssertEqual(OpenRPC.paramNames["setRequestor"], names)
        XCTAssertEqual(names.first, "requestorID")
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
