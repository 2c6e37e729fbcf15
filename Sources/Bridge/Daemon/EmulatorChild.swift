import Foundation
import Glibc
import JSONRPC

/// `pass-emulator` run as a child for `--backend emulator`: the binary beside `passbridge`,
/// on a free loopback port; its first stdout line is the base URL. Stopped with SIGTERM when the daemon exits.
final class EmulatorChild: Sendable {
    /// The software statement used with `--backend emulator` when none is given: an unsigned three-part JWT
    /// (`{"alg":"none","typ":"JWT"}` . `{"iss":"passbridge","software_id":"passbridge-offline"}` . `offline`), which
    /// the emulator accepts like any well-formed one (Sources/PassEmulator/README.md). Adobe would refuse it.
    static let developmentSoftwareStatement =
        "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJpc3MiOiJwYXNzYnJpZGdlIiwic29mdHdhcmVfaWQiOiJwYXNzYnJpZGdlLW9mZmxpbmUifQ.b2ZmbGluZQ"

    let process: Process
    let baseURL: URL
    /// Kept open so the child never writes into a closed pipe.
    let output: Pipe
    /// The write end of the child's stdin (`--exit-on-eof`), open for as long as this process lives.
    let lifeline: Pipe

    private init(process: Process, baseURL: URL, output: Pipe, lifeline: Pipe) {
        self.process = process
        self.baseURL = baseURL
        self.output = output
        self.lifeline = lifeline
    }

    /// Starts the child and waits (at most `timeout`) for its base URL.
    static func launch(timeout: Duration = .seconds(15)) throws(CommandLineError) -> EmulatorChild {
        let binary = executableDirectory() + "/pass-emulator"
        guard access(binary, X_OK) == 0 else { throw .failure("--backend emulator: \(binary) not found or not executable") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["--port", "0", "--exit-on-eof"]
        let output = Pipe()
        process.standardOutput = output
        // We hold the pipe's write end until we exit, however we exit: then the child sees end of input and stops.
        let lifeline = Pipe()
        process.standardInput = lifeline
        // Its request log is debugging detail: shown at --log-level debug or trace only.
        if Logger.level > .debug { process.standardError = FileHandle.nullDevice }
        do { try process.run() } catch { throw .failure("--backend emulator: cannot start \(binary): \(error)") }
        guard let line = firstLine(output.fileHandleForReading.fileDescriptor, timeout: timeout),
            line.hasPrefix("http://"), let url = URL(string: line)
        else {
            process.terminate()
            throw .failure("--backend emulator: pass-emulator did not print its base URL")
        }
        Logger(label: "emulator").info("pass-emulator started at \(line) (pid \(process.processIdentifier))")
        return EmulatorChild(process: process, baseURL: url, output: output, lifeline: lifeline)
    }

    /// Stops the child (SIGTERM) and reaps it.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    /// The folder of the running binary (`/proc/self/exe`, else argv[0]).
    static func executableDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let path = count > 0 ? String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
        return (path as NSString).deletingLastPathComponent
    }

    /// Reads bytes up to the first newline, waiting with poll(2) until the deadline; nil on EOF or timeout.
    static func firstLine(_ fd: Int32, timeout: Duration) -> String? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while ContinuousClock.now < deadline {
            var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pollFD, 1, 100)
            if ready < 0 && errno != EINTR { return nil }
            if ready <= 0 { continue }
            let count = read(fd, &byte, 1)
            if count <= 0 { return nil }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespaces) }
            bytes.append(byte)
        }
        return nil
    }
}
