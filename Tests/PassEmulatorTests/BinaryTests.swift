import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import JSON
import XCTest

/// The real `pass-emulator` binary over real HTTP: first stdout line, Date header, DCR, clean SIGTERM stop.
final class BinaryTests: XCTestCase {
    private var process: Process!
    private var base = ""

    override func setUpWithError() throws {
        let bundle = Bundle(for: Self.self).bundleURL
        let folder = bundle.pathExtension == "xctest" ? bundle.deletingLastPathComponent() : bundle
        process = Process()
        process.executableURL = folder.appendingPathComponent("pass-emulator")
        process.arguments = ["--port", "0"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) { line.append(byte) }
        base = String(decoding: line, as: UTF8.self)
    }

    override func tearDown() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    private func send(_ method: String, _ path: String, body: String? = nil, contentType: String? = nil) throws -> (HTTPURLResponse, JSON) {
        var request = URLRequest(url: URL(string: base + path)!)
        request.httpMethod = method
        request.httpBody = body.map { Data($0.utf8) }
        if let contentType { request.setValue(contentType, forHTTPHeaderField: "Content-Type") }
        let done = expectation(description: path)
        nonisolated(unsafe) var result: (Data?, URLResponse?)
        URLSession(configuration: .ephemeral).dataTask(with: request) { data, response, _ in
            result = (data, response)
            done.fulfill()
        }.resume()
        wait(for: [done], timeout: 10)
        let response = try XCTUnwrap(result.1 as? HTTPURLResponse)
        return (response, (try? JSON.parse([UInt8](result.0 ?? Data()))) ?? .null)
    }

    func testFirstLineIsTheLoopbackBaseURL() {
        XCTAssertTrue(base.hasPrefix("http://127.0.0.1:"), base)
        XCTAssertNotNil(UInt16(base.dropFirst("http://127.0.0.1:".count)))
    }

    func testRegistrationTokenAndMissingBearer() throws {
        let (registered, client) = try send(
            "POST", "/o/client/register",
            body: "{\"software_statement\":\"eyJhIjoxfQ.eyJiIjoyfQ.c2ln\",\"redirect_uri\":\"adobepass://ios.app\"}",
            contentType: "application/json")
        XCTAssertEqual(registered.statusCode, 201)
        let id = try XCTUnwrap(client["client_id"]?.stringValue)
        let secret = try XCTUnwrap(client["client_secret"]?.stringValue)
        let (issued, token) = try send(
            "POST", "/o/client/token", body: "client_id=\(id)&client_secret=\(secret)&grant_type=client_credentials",
            contentType: "application/x-www-form-urlencoded")
        XCTAssertEqual(issued.statusCode, 201)
        XCTAssertEqual(token["expires_in"], 21600)
        XCTAssertEqual(token["token_type"], "bearer")
        let (denied, error) = try send("GET", "/api/v2/REF/configuration")
        XCTAssertEqual(denied.statusCode, 401)
        XCTAssertEqual(error["code"], "invalid_access_token_client_application")
        XCTAssertEqual(error["action"], "application-registration")
        XCTAssertNotNil(denied.value(forHTTPHeaderField: "Date"))
    }

    func testSIGTERMStopsCleanly() {
        process.terminate()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .exit)
        XCTAssertEqual(process.terminationStatus, 0)
    }
}
