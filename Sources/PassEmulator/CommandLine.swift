import ArgumentParsing
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import Glibc
import JSON

/// The `pass-emulator` command line (README.md next to this file):
/// - `pass-emulator [--port 0] [--config FILE] [--key FILE] [--exit-on-eof]`: serve; the first stdout line is `http://127.0.0.1:PORT`.
/// - `pass-emulator verify-token TOKEN [--resource R] (--url BASE | --public-key FILE)`: exit 0 valid, 1 with the reason.
/// `--help` and `--version` win wherever they appear (exit 0); `--opt=value` equals `--opt value`. Usage errors print
/// one line on stderr and exit 2; failures exit 1 with one line on stderr.
public enum PassEmulatorCommand {
    static var usage: String {
        """
        USAGE: pass-emulator [--port PORT] [--config FILE] [--key FILE] [--exit-on-eof]
               pass-emulator verify-token TOKEN [--resource R] (--url BASE | --public-key FILE)
               pass-emulator --help | --version

        A stand-in for Adobe Pass on 127.0.0.1: REST API V2 and Dynamic Client Registration, a mock MVPD
        login, a second-screen activation page (/activate) and test controls under /__admin/. The first
        stdout line is the base URL http://127.0.0.1:PORT; logs go to stderr; SIGTERM or SIGINT stops it
        with exit 0. The configuration format and every endpoint: Sources/PassEmulator/README.md.


        """
            + OptionTable([serveOptions, verifyOptions, admin, .init("OTHER", [])]).usage(
                defaults: EmulatorOptions(), width: 116, column: 23)
    }

    /// The options of `pass-emulator` (serving), each declared once.
    static let serveOptions = OptionTable<EmulatorOptions, UsageError>.Section(
        "SERVE",
        [
            .option("--port", "PORT", help: "Port on 127.0.0.1, 0-65535; 0 takes any free port.", default: { "\($0.port)" }) {
                (options, text) throws(UsageError) in
                guard let port = UInt16(text) else { throw UsageError("--port needs a number 0-65535, got \(text)") }
                options.port = port
            },
            .option("--config", "FILE", help: "JSON configuration replacing the built-in one (requestors REF and REF2).") { options, path in
                options.configPath = path
            },
            .option("--key", "FILE", help: "PEM RSA private key that signs media tokens; without it, a new key at each start.") {
                options, path in options.keyPath = path
            },
            .flag("--exit-on-eof", help: "Also stop when standard input ends (a parent holding the pipe ties our life to its own).") {
                $0.exitOnEOF = true
            },
        ])

    /// The options of `pass-emulator verify-token`, each declared once.
    static let verifyOptions = OptionTable<EmulatorOptions, UsageError>.Section(
        "VERIFY-TOKEN (exit 0 valid, 1 invalid with the reason, 2 usage error)",
        arguments: [("TOKEN", "A media token's serializedToken.")],
        [
            .option("--resource", "R", help: "Also require this resource (the exact string, or an MRSS channel title).") {
                options, resource in options.resource = resource
            },
            .option("--url", "BASE", help: "Take the key and \"now\" from a running emulator at BASE.") { options, url in
                options.url = url
            },
            .option("--public-key", "FILE", help: "Take the key from this PEM file and \"now\" from the system clock.") { options, path in
                options.publicKey = path
            },
        ])

    /// The admin interface, in the usage between the options and OTHER.
    static let admin = OptionTable<EmulatorOptions, UsageError>.Section(
        "ADMIN (JSON bodies; never faulted nor throttled)", [],
        text: """
              GET    /__admin/clock          -> {nowMillis}
              POST   /__admin/clock          {advanceSeconds} or {setMillis} -> {nowMillis}
              POST   /__admin/reset          forget clients, sessions, profiles, passes, faults; system clock again
              POST   /__admin/faults         {method?, path, kind, value?, count?}; kinds: latency, status, malformed,
                                             truncated, contentType, drop, throttle, redirect
              DELETE /__admin/faults         remove every fault
              GET    /__admin/throttle       the built-in throttle's settings ({} when off)
              POST   /__admin/throttle       {requestsPerSecond?, burst?, per?, retryAfter?} switches it on
              DELETE /__admin/throttle       switches it off
              GET    /__admin/public-key     PEM of the media-token key
              POST   /__admin/partner-saml   {providerId, username, password, request} -> {samlResponse}

            """)

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

    /// The version `--version` prints: PassBridge's, `info.version` of `Protocol/openrpc.json`.
    public static let version = PackageVersion.string

    static let program = CommandLineProgram(name: "pass-emulator", version: version, usage: usage)

    /// Runs the command and returns the process exit status.
    public static func run(_ arguments: [String]) -> Int32 {
        if let status = program.helpOrVersion(arguments) { return status }
        do throws(UsageError) {
            var options = EmulatorOptions()
            if arguments.first == "verify-token" {
                let parsed = try OptionTable([verifyOptions]).parse(Array(arguments.dropFirst()), into: &options, positionals: 1)
                guard let token = parsed.positionals.first else { throw UsageError("verify-token needs a TOKEN") }
                return try verifyToken(token, options)
            }
            try OptionTable([serveOptions]).parse(arguments, into: &options)
            return serve(port: options.port, configPath: options.configPath, keyPath: options.keyPath, exitOnEOF: options.exitOnEOF)
        } catch {
            return program.usageError(error)
        }
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

    private static func verifyToken(_ token: String, _ options: EmulatorOptions) throws(UsageError) -> Int32 {
        let (url, publicKey) = (options.url, options.publicKey)
        guard (url == nil) != (publicKey == nil) else { throw UsageError("give exactly one of --url or --public-key") }
        let pem: String
        var now = Int64(Date().timeIntervalSince1970 * 1000)
        if let base = url {
            guard let fetched = fetch(base + "/__admin/public-key") else { return failure("cannot fetch the public key from \(base)") }
            pem = String(decoding: fetched, as: UTF8.self)
            if let clock = fetch(base + "/__admin/clock"), let millis = (try? JSON.parse(clock))?["nowMillis"]?.int64Value { now = millis }
        } else {
            guard let publicKey, let text = try? String(contentsOfFile: publicKey, encoding: .utf8) else {
                return failure("cannot read \(publicKey ?? "")")
            }
            pem = text
        }
        guard let key = RSAKey.publicKey(pem: pem) else { return failure("not a PEM public key") }
        do {
            let verified = try MediaToken.verify(token, key: key, nowMillis: now, resource: options.resource)
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

    private static func failure(_ message: String) -> Int32 {
        log(message)
        return 1
    }
}

/// What `pass-emulator`'s command line says (``PassEmulatorCommand``, whose sections declare each option once).
struct EmulatorOptions: Sendable {
    var port: UInt16 = 0
    var configPath: String?
    var keyPath: String?
    var exitOnEOF = false
    /// `verify-token`'s.
    var resource: String?
    var url: String?
    var publicKey: String?
}

/// A body handed from URLSession's thread to the waiting caller.
final class FetchResult: @unchecked Sendable {
    private let lock = NSLock()
    private var bytes: [UInt8]?
    func set(_ value: [UInt8]) { lock.lock(); bytes = value; lock.unlock() }
    func get() -> [UInt8]? { lock.lock(); defer { lock.unlock() }; return bytes }
}
