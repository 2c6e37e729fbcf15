import AccessEnabler
import Foundation
import JSON
import XCTest

/// A profile stored before a SIGKILL is there after the restart (Protocol/README.md "The store": a login
/// reported with setAuthenticationStatus(1) is on disk). The process killed is the real `passbridge` daemon.
final class PersistenceTests: EmulatorTestCase {
    func testProfileStoredBeforeSIGKILLSurvivesRestart() async throws {
        let directory = temporaryDirectory()
        let daemon = try StdioDaemon(arguments: [
            "--backend", emulator.baseURL.absoluteString, "--state-dir", directory.path,
            "--software-statement", Self.softwareStatement,
        ])
        defer { daemon.kill() }
        XCTAssertEqual(try daemon.call(1, "setRequestor", ["requestorID": "REF"])["result"]?["status"], 1)
        try daemon.send(2, "getAuthentication")
        _ = try daemon.next { $0["method"] == "displayProviderDialog" }
        try daemon.send(3, "setSelectedProvider", ["mvpdId": "MockMVPD"])
        let navigate = try daemon.next { $0["method"] == "navigateToUrl" }
        let url = try XCTUnwrap(navigate["params"]?["url"]?.stringValue)
        let end = try await Browser().open(url, fields: ["username": "demo", "password": "demo"])
        guard case .redirected(let redirect) = end else { return XCTFail("login did not reach the redirect URL: \(end)") }
        try daemon.send(4, "handleExternalURL", ["url": .string(redirect)])
        let login = try daemon.next { $0["id"] == 2 }
        XCTAssertEqual(login["result"]?["status"], 1, "\(login)")
        daemon.kill()
        XCTAssertEqual(daemon.process.terminationReason, .uncaughtSignal)

        let client = try makeClient(directory: directory)
        await ready(client)
        let check = await client.engine.checkAuthentication()
        XCTAssertEqual(check, AuthenticationStatus(status: 1, errorCode: ""))
        _ = client.delegate.take()
        let play = await client.engine.checkAuthorization("ch1", data: nil)
        guard case .token = play else { return XCTFail("the restored profile is not accepted: \(play)") }
    }
}

/// `passbridge --stdio` next to the test bundle, spoken to in NDJSON; killed with SIGKILL after 60 s at the
/// latest, so that a daemon that never answers ends the test instead of hanging it.
private final class StdioDaemon: @unchecked Sendable {
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffer: [UInt8] = []

    init(arguments: [String]) throws {
        process.executableURL = EmulatorProcess.productsDirectory.appendingPathComponent("passbridge")
        process.arguments = ["--stdio"] + arguments
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        signal(SIGPIPE, SIG_IGN)
        try process.run()
        DispatchQueue.global().asyncAfter(deadline: .now() + 60) { [process] in
            if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        }
    }

    /// Sends a request; throws when the daemon is gone (SIGPIPE is ignored, so the write fails instead).
    func send(_ id: Int64, _ method: String, _ params: JSONObject = [:]) throws {
        let request: JSON = ["jsonrpc": "2.0", "id": .integer(id), "method": .string(method), "params": .object(params)]
        try input.fileHandleForWriting.write(contentsOf: Data(request.serialized() + [UInt8(ascii: "\n")]))
    }

    /// Sends a request and returns its response.
    func call(_ id: Int64, _ method: String, _ params: JSONObject = [:]) throws -> JSON {
        try send(id, method, params)
        return try next { $0["id"] == .integer(id) }
    }

    /// The next message that `matches`, skipping the others.
    func next(where matches: (JSON) -> Bool) throws -> JSON {
        while true {
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let message = try JSON.parse(Array(buffer[..<newline]))
                buffer.removeSubrange(...newline)
                if matches(message) { return message }
            }
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { throw DaemonEnded() }
            buffer += data
        }
    }

    func kill() {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// The daemon closed its output before the awaited message.
private struct DaemonEnded: Error {}
