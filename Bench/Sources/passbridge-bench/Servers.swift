import Foundation

/// The three servers measured side by side, each answering the same unknown-method request.
enum ServerKind: String, CaseIterable {
    case passbridge
    case c = "C+jansson"
    case python = "Python asyncio"
}

/// Where the programs are: the built passbridge next to this binary, the C server compiled here.
struct Programs {
    let passbridge: String
    let cServer: String
    let pythonServer: String
    let scratch: String

    /// Compiles the C server with `cc` into a scratch folder; fails with a readable message.
    static func prepare() throws -> Programs {
        let benchDir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let binDir = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let passbridge = binDir.appendingPathComponent("passbridge").path
        guard FileManager.default.isExecutableFile(atPath: passbridge) else {
            throw BenchError("\(passbridge) is missing: run `swift build -c release --product passbridge` first")
        }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("passbridge-bench-\(getpid())").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let cServer = scratch + "/ndjson-server"
        let source = benchDir.appendingPathComponent("c-server/ndjson-server.c").path
        let cc = Process()
        cc.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        cc.arguments = ["cc", "-O2", "-o", cServer, source, "-ljansson"]
        try cc.run()
        cc.waitUntilExit()
        guard cc.terminationStatus == 0 else { throw BenchError("cc failed to build \(source)") }
        return Programs(passbridge: passbridge, cServer: cServer, pythonServer: benchDir.appendingPathComponent("python-server.py").path, scratch: scratch)
    }

    /// The command line serving stdio (`socket` nil) or a Unix socket.
    func command(_ kind: ServerKind, socket: String?) -> [String] {
        let transport = socket.map { ["--socket", $0] } ?? ["--stdio"]
        switch kind {
        case .passbridge: return [passbridge] + transport + ["--log-level", "error"]
        case .c: return [cServer] + transport
        case .python: return ["/usr/bin/env", "python3", pythonServer] + transport
        }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
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
