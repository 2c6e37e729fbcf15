import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Glibc
import JSON

/// The `pass-emulator` command line (DESIGN §5):
/// - `pass-emulator [--port 0] [--config FILE] [--key FILE]`: serve; the first stdout line is `http://127.0.0.1:PORT`.
/// - `pass-emulator verify-token TOKEN [--resource R] (--url BASE | --public-key FILE)`: exit 0 valid, 1 with the reason.
/// Usage errors exit 2, failures 1 (one line on stderr).
public enum PassEmulatorCommand {
    static let usage = """
        usage: pass-emulator [--port PORT] [--config FILE] [--key FILE] [--exit-on-eof]
               pass-emulator verify-token TOKEN [--resource R] (--url BASE | --public-key FILE)
               pass-emulator --help | --version

        """

    /// `--exit-on-eof`: a thread waits for standard input to end, then stops the server as SIGTERM does.
    /// A parent that keeps the write end of a pipe on our stdin ties our life to its own, even if it is killed.
    private static func stopAtEndOfInput() {
        Thread.detachNewThread {
            var byte: UInt8 = 0
            while true {
                let count = read(0, &byte, 1)
                if count == 0 || (count < 0 && errno != EINTR) { break }
            }
            kill(getpid(), SIGTERM)
        }
    }

    /// The version `--version` prints.
    public static let version = "0.1.0"

    /// Runs the command and returns the process exit status.
    public static func run(_ arguments: [String]) -> Int32 {
        if arguments.first == "verify-token" { return verifyToken(Array(arguments.dropFirst())) }
        if arguments.contains("--help") || arguments.contains("-h") {
            writeOut(usage)
            return 0
        }
        if arguments == ["--version"] {
            writeOut("pass-emulator \(version)\n")
            return 0
        }
        var options: [String: String] = [:]
        var exitOnEOF = false
        var index = 0
        while index < arguments.count {
            let name = arguments[index]
            if name == "--exit-on-eof" {
                exitOnEOF = true
                index += 1
                continue
            }
            guard ["--port", "--config", "--key"].contains(name), index + 1 < arguments.count else { return usageError("unexpected argument \(name)") }
            options[name] = arguments[index + 1]
            index += 2
        }
        guard let port = UInt16(options["--port"] ?? "0") else { return usageError("--port needs a number 0-65535") }
        return serve(port: port, configPath: options["--config"], keyPath: options["--key"], exitOnEOF: exitOnEOF)
    }

    private static func serve(port: UInt16, configPath: String?, keyPath: String?, exitOnEOF: Bool) -> Int32 {
        let config: EmulatorConfig
        do {
            config = try configPath.map { path throws(ConfigError) in try EmulatorConfig.load(path: path) } ?? EmulatorConfig.builtIn()
        } catch {
            return failure("bad configuration: \(error)")
        }
        let key: RSAKey
        if let keyPath {
            guard let text = try? String(contentsOfFile: keyPath, encoding: .utf8), let loaded = RSAKey.privateKey(pem: text) else {
                return failure("cannot read an RSA private key from \(keyPath)")
            }
            key = loaded
        } else {
            guard let generated = RSAKey.generate() else { return failure("cannot generate an RSA key") }
            key = generated
        }
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        signal(SIGPIPE, SIG_IGN)
        let emulator = Emulator(config: config, key: key)
        let server: HTTPServer
        do {
            server = try HTTPServer(port: port, responder: emulator)
        } catch {
            return failure("cannot listen on 127.0.0.1:\(port): \(error)")
        }
        emulator.baseURL = "http://127.0.0.1:\(server.port)"
        writeOut(emulator.baseURL + "\n")
        log("serving \(config.serviceProviders.map(\.id).joined(separator: ", ")) at \(emulator.baseURL)")
        if exitOnEOF { stopAtEndOfInput() }
        var received: Int32 = 0
        sigwait(&signals, &received)
        log("signal \(received): stopping")
        server.stop()
        return 0
    }

    private static func verifyToken(_ arguments: [String]) -> Int32 {
        var token: String?
        var options: [String: String] = [:]
        var index = 0
        while index < arguments.count {
            let item = arguments[index]
            if ["--resource", "--url", "--public-key"].contains(item) {
                guard index + 1 < arguments.count else { return usageError("\(item) needs a value") }
                options[item] = arguments[index + 1]
                index += 2
            } else if token == nil, !item.hasPrefix("--") {
                token = item
                index += 1
            } else {
                return usageError("unexpected argument \(item)")
            }
        }
        guard let token else { return usageError("verify-token needs a TOKEN") }
        guard (options["--url"] == nil) != (options["--public-key"] == nil) else { return usageError("give exactly one of --url or --public-key") }
        let pem: String
        var now = Int64(Date().timeIntervalSince1970 * 1000)
        if let base = options["--url"] {
            guard let fetched = fetch(base + "/__admin/public-key") else { return failure("cannot fetch the public key from \(base)") }
            pem = String(decoding: fetched, as: UTF8.self)
            if let clock = fetch(base + "/__admin/clock"), let millis = (try? JSON.parse(clock))?["nowMillis"]?.int64Value { now = millis }
        } else {
            guard let text = try? String(contentsOfFile: options["--public-key"]!, encoding: .utf8) else {
                return failure("cannot read \(options["--public-key"]!)")
            }
            pem = text
        }
        guard let key = RSAKey.publicKey(pem: pem) else { return failure("not a PEM public key") }
        do {
            let verified = try MediaToken.verify(token, key: key, nowMillis: now, resource: options["--resource"])
            writeOut("valid: resource \(verified.resourceID), mvpd \(verified.mvpdId), expires \(verified.issueTime + verified.ttl)\n")
            return 0
        } catch {
            writeOut("invalid: \(error)\n")
            log("token rejected: \(error)")
            return 1
        }
    }

    /// A blocking GET returning the body of a 200 answer.
    private static func fetch(_ address: String) -> [UInt8]? {
        guard let url = URL(string: address) else { return nil }
        let result = FetchResult()
        let semaphore = DispatchSemaphore(value: 0)
        let task = URLSession(configuration: .ephemeral).dataTask(with: url) { @Sendable data, response, _ in
            if (response as? HTTPURLResponse)?.statusCode == 200, let data { result.set([UInt8](data)) }
            semaphore.signal()
        }
        task.resume()
        _ = semaphore.wait(timeout: .now() + 10)
        return result.get()
    }

    private static func usageError(_ message: String) -> Int32 {
        log(message)
        writeErr(usage)
        return 2
    }

    private static func failure(_ message: String) -> Int32 {
        log(message)
        return 1
    }
}

/// A body handed from URLSession's thread to the waiting caller.
final class FetchResult: @unchecked Sendable {
    private let lock = NSLock()
    private var bytes: [UInt8]?
    func set(_ value: [UInt8]) { lock.lock(); bytes = value; lock.unlock() }
    func get() -> [UInt8]? { lock.lock(); defer { lock.unlock() }; return bytes }
}

/// Writes to stdout unbuffered (the first line must reach a pipe at once).
func writeOut(_ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

func writeErr(_ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}
