import ArgumentParsing
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import Glibc
import JSON

/// The `pass-emulator` command line (README.md next to this file):
/// - `pass-emulator [--port 0] [--host ADDR] [--public-url URL] [--config FILE] [--key FILE] [--exit-on-eof]`: serve; the
///   first stdout line is the URL this machine reaches it at (`http://127.0.0.1:PORT`), the second, only when it
///   differs, the public URL its pages hand out (``ServeAddresses``).
/// - `pass-emulator verify-token TOKEN [--resource R] (--url BASE | --public-key FILE)`: exit 0 valid, 1 with the reason.
/// `--help` and `--version` win wherever they appear (exit 0); `--opt=value` equals `--opt value`. Usage errors print
/// one line on stderr and exit 2; failures exit 1 with one line on stderr.
public enum PassEmulatorCommand {
    static var usage: String {
        """
        USAGE: pass-emulator [--port PORT] [--host ADDR] [--public-url URL] [--config FILE] [--key FILE] [--exit-on-eof]
               pass-emulator verify-token TOKEN [--resource R] (--url BASE | --public-key FILE)
               pass-emulator --help | --version

        A stand-in for Adobe Pass on 127.0.0.1 (--host to change): REST API V2 and Dynamic Client Registration, a mock MVPD
        login, a second-screen activation page (/activate) and test controls under /__admin/. The first
        stdout line is the base URL this machine reaches it at (http://127.0.0.1:PORT); with --host or
        --public-url a second line, when it differs, is the public base URL its pages and redirects use
        (what a phone opens). Logs go to stderr; SIGTERM or SIGINT stops it with exit 0. The
        configuration format and every endpoint: Sources/PassEmulator/README.md.


        """
            + OptionTable([serveOptions, verifyOptions, admin, .init("OTHER", [])]).usage(
                defaults: EmulatorOptions(), width: 116, column: 23)
    }

    /// The environment variable naming the key file when `--key` is absent: one key across restarts, also for the
    /// emulators that `passbridge --backend emulator` and `passbridge-call dev` start (they pass no `--key`).
    /// Generating a 2048-bit key costs 0.2–1 s of CPU at each start; the test suite sets it once for all of them.
    static let keyVariable = "PASS_EMULATOR_KEY_FILE"

    /// The options of `pass-emulator` (serving), each declared once.
    static let serveOptions = OptionTable<EmulatorOptions, UsageError>.Section(
        "SERVE",
        [
            .option("--port", "PORT", help: "Port to listen on, 0-65535; 0 takes any free port.", default: { "\($0.port)" }) {
                (options, text) throws(UsageError) in
                guard let port = UInt16(text) else { throw UsageError("--port needs a number 0-65535, got \(text)") }
                options.port = port
            },
            .option(
                "--host", "ADDR",
                help: "IPv4 address to listen on; 0.0.0.0 listens on every interface, so that a phone on the same network "
                    + "can open the pages.",
                default: { $0.host }
            ) { (options, text) throws(UsageError) in
                var address = in_addr()
                guard inet_pton(AF_INET, text, &address) == 1 else { throw UsageError("--host needs an IPv4 address, got \(text)") }
                options.host = text
            },
            .option(
                "--public-url", "URL",
                help: "Base of the URLs the pages and answers hand out (activation, login and logout pages, their redirects), "
                    + "as a phone reaches this machine: http(s)://HOST[:PORT][/PATH]. Default: http://ADDR:PORT, ADDR being "
                    + "--host, or this machine's first non-loopback IPv4 address for 0.0.0.0."
            ) { (options, text) throws(UsageError) in
                guard let url = ServeAddresses.publicBase(text) else {
                    throw UsageError("--public-url needs an http or https URL without query or fragment, got \(text)")
                }
                options.publicURL = url
            },
            .option("--config", "FILE", help: "JSON configuration replacing the built-in one (requestors REF and REF2).") { options, path in
                options.configPath = path
            },
            .option(
                "--key", "FILE",
                help: "PEM RSA private key that signs media tokens (default: $\(keyVariable) when set and not empty); "
                    + "without either, a new 2048-bit key at each start."
            ) { options, path in options.keyPath = path },
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
              POST   /__admin/clock          {advanceSeconds} or {setMillis}, {stopped}? -> {nowMillis}
              POST   /__admin/reset          forget clients, sessions, profiles, passes, faults, rules, the request log,
                                             platform services switched off; system clock again
              POST   /__admin/faults         {method?, path, kind, value?, count?, skip?, status?}; kinds: latency, status,
                                             error, malformed, truncated, contentType, drop, throttle, redirect
              DELETE /__admin/faults         remove every fault
              GET    /__admin/throttle       the built-in throttle's settings ({} when off)
              POST   /__admin/throttle       {requestsPerSecond?, burst?, per?, retryAfter?} switches it on
              DELETE /__admin/throttle       switches it off
              GET    /__admin/public-key     PEM of the media-token key
              POST   /__admin/partner-saml   {providerId, username, password, request} -> {samlResponse}
              POST   /__admin/limits         {maxAuthorizeResources?, maxPreauthorizeResources?} per call (0 = none)
              POST   /__admin/degradation    {mvpd, rule}: AuthNAll, AuthZAll, AuthZNone, or null to lift it
              POST   /__admin/item-errors    {resource, code, count?}: the next decisions for it carry that error
              POST   /__admin/platform-services  {serviceProvider, mvpd, enablePlatformServices} switches an
                                             MVPD's single sign-on off (false) or back as configured (true)
              POST   /__admin/profiles       {serviceProvider, mvpd, device, username?, ttlSeconds?}: logs device in out of band
                                             for every client registered so far (device: what getMetadata
                                             METADATA_DEVICE_ID answers; a daemon finds it at its next setRequestor)
              DELETE /__admin/profiles       {serviceProvider, device, mvpd?}: logs it out out of band
              GET    /__admin/requests       {requests: [{method, path, query, resources?}]}: the REST V2 and DCR
                                             calls received since the last reset (the latest 10,000), oldest first

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
            return serve(options)
        } catch {
            return program.usageError(error)
        }
    }

    private static func serve(_ options: EmulatorOptions) -> Int32 {
        let (port, configPath, keyPath, exitOnEOF) = (options.port, options.configPath, options.keyPath, options.exitOnEOF)
        // SIGTERM and SIGINT are taken by `sigwait` below, and held until then from here on: one that comes while
        // the configuration and the key are read (making a key takes a good part of a second) still ends the
        // emulator with exit 0, as --help says, instead of killing it.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        let config: EmulatorConfig
        do {
            config = try configPath.map { path throws(ConfigError) in try EmulatorConfig.load(path: path) } ?? EmulatorConfig.builtIn()
        } catch {
            return failure("bad configuration: \(error)")
        }
        let key: RSAKey
        let fromEnvironment = keyPath == nil ? getenv(keyVariable).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } : nil
        if let path = keyPath ?? fromEnvironment {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8), let loaded = RSAKey.privateKey(pem: text) else {
                return failure("cannot read an RSA private key from \(path)" + (fromEnvironment == nil ? "" : " (named by \(keyVariable))"))
            }
            key = loaded
        } else {
            guard let generated = RSAKey.generate() else { return failure("cannot generate an RSA key") }
            key = generated
        }
        // A signal that came while the key was read or made: stop before serving anything.
        var pending = sigset_t()
        sigpending(&pending)
        if let received = [SIGTERM, SIGINT].first(where: { sigismember(&pending, $0) == 1 }) {
            log("signal \(received) while starting: stopping")
            return 0
        }
        signal(SIGPIPE, SIG_IGN)
        let emulator = Emulator(config: config, key: key)
        let server: HTTPServer
        do {
            // A load test's clients each hold a connection: as many as the open-file limit allows, less a margin for
            // the emulator's own files.
            let files = CommandLineProgram.raiseOpenFileLimit()
            server = try HTTPServer(port: port, host: options.host, responder: emulator, connectionLimit: max(64, files - 64))
        } catch {
            return failure("cannot listen on \(options.host):\(port): \(error)")
        }
        let addresses = ServeAddresses(
            host: options.host, port: server.port, publicURL: options.publicURL, interfaceAddress: ServeAddresses.firstInterfaceAddress())
        emulator.baseURL = addresses.publicURL
        writeOut(addresses.stdoutLines)
        let shown = addresses.publicURL == addresses.localURL ? "" : " (public URL \(addresses.publicURL))"
        log("serving \(config.serviceProviders.map(\.id).joined(separator: ", ")) at \(addresses.localURL)\(shown)")
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
    var host = "127.0.0.1"
    /// `--public-url`, without a trailing `/`.
    var publicURL: String?
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

/// Where a serving emulator is reached: from this machine (`localURL`, the first stdout line) and from other
/// devices (`publicURL`, the base of every absolute URL it hands out; the second stdout line when it differs).
struct ServeAddresses: Equatable {
    let localURL: String
    let publicURL: String

    /// `host` as given to `--host`; `interfaceAddress` the address to show other devices when `host` is 0.0.0.0
    /// (``firstInterfaceAddress()``; nil when this machine has none but loopback).
    init(host: String, port: UInt16, publicURL: String?, interfaceAddress: String?) {
        let everywhere = host == "0.0.0.0"
        localURL = "http://\(everywhere ? "127.0.0.1" : host):\(port)"
        self.publicURL = publicURL ?? (everywhere ? interfaceAddress.map { "http://\($0):\(port)" } ?? localURL : localURL)
    }

    /// What `serve` prints on stdout.
    var stdoutLines: String { localURL + "\n" + (publicURL == localURL ? "" : publicURL + "\n") }

    /// `--public-url`'s value without its trailing `/`, when it is an absolute http(s) URL with a host and no query
    /// or fragment; nil otherwise.
    static func publicBase(_ text: String) -> String? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty, url.query == nil, url.fragment == nil
        else { return nil }
        var base = text
        while base.hasSuffix("/") { base.removeLast() }
        return base
    }

    /// The IPv4 address of this machine's first interface that is up and not loopback (getifaddrs(3)), in
    /// interface order; nil when there is none.
    static func firstInterfaceAddress() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        var entry: UnsafeMutablePointer<ifaddrs>? = first
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            let flags = Int32(current.pointee.ifa_flags)
            guard let address = current.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0
            else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            var ipv4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            guard inet_ntop(AF_INET, &ipv4, &text, socklen_t(text.count)) != nil else { continue }
            return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return nil
    }
}
