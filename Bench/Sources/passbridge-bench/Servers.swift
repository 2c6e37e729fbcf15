import Foundation

/// One server measured side by side with the others, each answering the same unknown-method request.
struct Server {
    let name: String
    /// The binary when it is a passbridge (it also gets the authorization row).
    let passbridge: String?
    /// The command line serving stdio (`socket` nil) or a Unix socket.
    let command: (_ socket: String?) -> [String]
}

/// Where the programs are: the built passbridge next to this binary, the C server and C client compiled here.
struct Programs {
    let servers: [Server]
    let cClient: String
    let binDir: String
    let benchDir: String
    let scratch: String

    /// Compiles the C server and client with `cc` into a scratch folder; fails with a readable message.
    /// `passbridge` replaces the one next to this binary; `before` adds a second passbridge column, and each of
    /// `steps` (name, binary) one more, between the two.
    static func prepare(passbridge: String?, before: String?, steps: [(String, String)] = []) throws -> Programs {
        let benchDir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let binDir = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let daemon = passbridge ?? binDir.appendingPathComponent("passbridge").path
        for binary in [daemon] + steps.map(\.1) + (before.map { [$0] } ?? []) where !FileManager.default.isExecutableFile(atPath: binary) {
            throw BenchError("\(binary) is missing: run `swift build -c release --product passbridge` first")
        }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("passbridge-bench-\(getpid())").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let cServer = scratch + "/ndjson-server"
        let cClient = scratch + "/ndjson-client"
        try compile(benchDir.appendingPathComponent("c-server/ndjson-server.c").path, to: cServer, libraries: ["-ljansson"])
        try compile(benchDir.appendingPathComponent("c-client/ndjson-client.c").path, to: cClient, libraries: [])
        let python = benchDir.appendingPathComponent("python-server.py").path
        func daemonServer(_ name: String, _ binary: String) -> Server {
            Server(name: name, passbridge: binary) { socket in
                [binary] + (socket.map { ["--socket", $0] } ?? ["--stdio"]) + ["--log-level", "error"]
            }
        }
        var servers = [daemonServer("passbridge", daemon)]
        for (name, binary) in steps { servers.append(daemonServer(name, binary)) }
        if let before { servers.append(daemonServer("passbridge (before)", before)) }
        servers.append(
            Server(name: "C+jansson", passbridge: nil) { socket in [cServer] + (socket.map { ["--socket", $0] } ?? ["--stdio"]) })
        servers.append(
            Server(name: "Python asyncio", passbridge: nil) { socket in
                ["/usr/bin/env", "python3", python] + (socket.map { ["--socket", $0] } ?? ["--stdio"])
            })
        return Programs(servers: servers, cClient: cClient, binDir: binDir.path, benchDir: benchDir.path, scratch: scratch)
    }

    private static func compile(_ source: String, to binary: String, libraries: [String]) throws {
        let cc = Process()
        cc.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        cc.arguments = ["cc", "-O2", "-o", binary, source] + libraries
        try cc.run()
        cc.waitUntilExit()
        guard cc.terminationStatus == 0 else { throw BenchError("cc failed to build \(source)") }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// What `command` printed on stdout; throws when it fails.
func output(of command: [String]) throws -> String {
    let process = Process()
    let output = Pipe()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = command
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw BenchError("\(command.joined(separator: " ")) failed (\(process.terminationStatus))")
    }
    return String(decoding: data, as: UTF8.self)
}

/// Runs a program to its end and returns its standard output's `name value` lines as numbers.
func printedFigures(of command: [String]) throws -> [String: Double] {
    var values: [String: Double] = [:]
    for line in try output(of: command).split(separator: "\n") {
        let parts = line.split(separator: " ")
        if parts.count == 2, let value = Double(parts[1]) { values[String(parts[0])] = value }
    }
    return values
}

/// A running server process; stdio servers expose their pipes as raw fds.
final class RunningServer {
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    let socketPath: String?

    /// Starts the server; for a socket server, waits until it accepts.
    init(_ command: [String], socketPath: String?) throws {
        self.socketPath = socketPath
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.standardInput = socketPath == nil ? input : FileHandle.nullDevice
        process.standardOutput = socketPath == nil ? output : FileHandle.nullDevice
        try process.run()
        if let socketPath {
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline {
                if let fd = try? connectUnix(socketPath) {
                    close(fd)
                    return
                }
                usleep(5000)
            }
            throw BenchError("\(command[0]) never listened on \(socketPath)")
        }
    }

    /// Write end of the server's stdin.
    var stdinFD: Int32 { input.fileHandleForWriting.fileDescriptor }
    /// Read end of the server's stdout.
    var stdoutFD: Int32 { output.fileHandleForReading.fileDescriptor }

    /// Resident set size in KiB, from /proc.
    var rssKiB: Int {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8) else { return 0 }
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }

    func stop() {
        if socketPath == nil { try? input.fileHandleForWriting.close() }
        process.terminate()
        process.waitUntilExit()
        if let socketPath { unlink(socketPath) }
    }
}

/// A blocking connection to the Unix socket at `path`.
func connectUnix(_ path: String) throws -> Int32 {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard result == 0 else {
        close(fd)
        throw BenchError("connect \(path): \(String(cString: strerror(errno)))")
    }
    return fd
}
