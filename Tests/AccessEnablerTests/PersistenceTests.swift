import AccessEnabler
import Foundation
import JSON
import XCTest

/// A profile stored before a SIGKILL is there after the restart (DESIGN §4 "a crash loses no token").
final class PersistenceTests: EmulatorTestCase {
    func testProfileStoredBeforeSIGKILLSurvivesRestart() async throws {
        let directory = temporaryDirectory()
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments = ["AccessEnablerTests.PersistenceChild/testLoginThenWaitForKill"]
        var environment = ProcessInfo.processInfo.environment
        environment["AE_CHILD_BACKEND"] = emulator.baseURL.absoluteString
        environment["AE_CHILD_STATE"] = directory.path
        child.environment = environment
        let output = Pipe()
        child.standardOutput = output
        child.standardError = FileHandle.nullDevice
        try child.run()
        var seen = ""
        let handle = output.fileHandleForReading
        while !seen.contains(PersistenceChild.marker) {
            let data = handle.availableData
            if data.isEmpty { break }
            seen += String(decoding: data, as: UTF8.self)
        }
        XCTAssertTrue(seen.contains(PersistenceChild.marker), "child output: \(seen)")
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        XCTAssertEqual(child.terminationReason, .uncaughtSignal)

        let client = try makeClient(directory: directory)
        await ready(client)
        let check = await client.engine.checkAuthentication()
        XCTAssertEqual(check, AuthenticationStatus(status: 1, errorCode: ""))
        _ = client.delegate.take()
        let play = await client.engine.checkAuthorization("ch1", data: nil)
        guard case .token = play else { return XCTFail("the restored profile is not accepted: \(play)") }
    }
}

/// Runs only as the child process of the test above: logs in, says so on stdout, waits to be killed.
final class PersistenceChild: EmulatorTestCase {
    static let marker = "AE-CHILD-PROFILE-STORED"

    override func setUp() async throws {}

    func testLoginThenWaitForKill() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let backend = environment["AE_CHILD_BACKEND"].flatMap(URL.init(string:)), let state = environment["AE_CHILD_STATE"] else {
            return  // not the child: nothing to do
        }
        let client = try makeClient(directory: URL(fileURLWithPath: state), backend: backend)
        let status = await client.engine.setRequestor("REF", serviceProviders: nil)
        XCTAssertEqual(status, 1)
        try await login(client)
        let check = await client.engine.checkAuthentication()
        guard check.status == 1 else { return }
        FileHandle.standardOutput.write(Data((Self.marker + "\n").utf8))
        try await Task.sleep(for: .seconds(60))
    }
}
