import AccessEnabler
import ArgumentParsing
import Glibc
import JSONRPC

/// Everything the daemon's command line says (`passbridge --help`; the flags are described in README.md). Each
/// flag is declared once, in ``table``, with swift-argument-parser's conventions (``ArgumentParsing/OptionTable``);
/// the defaults are the initial values below.
public struct DaemonOptions: Sendable {
    public enum Transport: Equatable, Sendable {
        case stdio
        case socket(path: String)
    }

    /// PassBridge's version, `info.version` of `Protocol/openrpc.json` (embedded by Plugins/EmbedOpenRPC), so
    /// `--version`, `rpc.discover` and the packages built by `Clients/debian` and `Clients/python` agree.
    public static let version = OpenRPC.version
    static let defaultBackend = "https://sp.auth.adobe.com"
    public static let stagingBackend = "https://sp.auth-staging.adobe.com"

    public var transport: Transport = .stdio
    /// REST V2 base URL, or `"emulator"` (start pass-emulator as a child).
    public var backend = DaemonOptions.defaultBackend
    /// `--software-statement`: a JWT, or `@FILE` as given (the bridge reads the file).
    public var softwareStatement: String?
    /// `--state-dir`; nil = `$STATE_DIRECTORY`, else `$XDG_STATE_HOME/passbridge`, else `~/.local/state/passbridge`.
    public var stateDir: String?
    /// `--store postgresql://…`: the fleet's shared store instead of SQLite in the state directory.
    public var store: String?
    /// `--redirect-url`: what the application's web view intercepts, unless a connection's `init` names another.
    public var redirectURL = "adobepass://ios.app"
    /// `--svc-mvpds`: the MVPDs whose pages open in the Safari View Controller, unless `init` names them.
    public var svcMVPDs: Set<String>?
    /// `--svc-redirect-url`: those MVPDs' redirect URL, unless `init` names another.
    public var svcRedirectURL: String?
    public var activationURL: String?
    /// `--socket-group` resolved to a gid.
    public var socketGroup: UInt32?
    public var allowedUIDs: Set<UInt32> = []
    public var logLevel: Logger.Level = .info
    /// `--max-message-bytes`, `--shutdown-timeout` and `--stall-timeout`; the rest keep `ConnectionLimits`'
    /// defaults.
    public var limits = ConnectionLimits()
    /// `--request-timeout` in seconds: the hard deadline of each HTTP request to the backend.
    public var requestTimeout = AccessEnablerConfiguration.defaultRequestTimeout
    /// How often the store looks for other processes' login changes when it has no socket to wait on for them
    /// (`TokenStore.defaultLookInterval`). Not a flag of `passbridge`: the test daemon sets it
    /// (`passbridge-test-daemon --test-store-look-seconds`) to show that PostgreSQL's notifications need no look.
    public var storeLookInterval = TokenStore.defaultLookInterval
    /// How often a second-screen login polls `profiles/code/{code}` (nil: the engine's 4 s,
    /// `AccessEnablerConfiguration.pollInterval`). Not a flag of `passbridge`: the test daemon sets it
    /// (`passbridge-test-daemon --test-poll-seconds`) so that tests of second-screen logins do not wait 4 s per poll.
    public var pollInterval: Duration?
    /// How long a logout waits for its page to come back through handleExternalURL before it ends without it (nil:
    /// the engine's 10 s, `AccessEnablerConfiguration.logoutTimeout`). Not a flag of `passbridge`: the test daemon
    /// sets it (`passbridge-test-daemon --test-logout-page-seconds`) for tests that let logout pages go unanswered.
    public var logoutTimeout: Duration?

    /// The defaults `passbridge --help` shows.
    public init() {}
}

/// Why the daemon cannot start as asked.
public enum CommandLineError: Error {
    /// Bad usage: one line on stderr with a pointer to `--help`, exit 2.
    case usage(String)
    /// A valid request that cannot be met: one line on stderr, exit 1.
    case failure(String)
}

extension DaemonOptions {
    /// `passbridge --help`: what the daemon is, then the sections of ``table`` with the defaults of
    /// `DaemonOptions()`.
    public static var usage: String {
        """
        USAGE: passbridge [--stdio | --socket PATH] [options]
               passbridge state list|reset [--state-dir DIR | --store URL] [--requestor ID] [--device ID]
               passbridge state logout [--backend URL | --staging] [--state-dir DIR | --store URL] [--requestor ID]
                                       [--device ID]
               passbridge stats [--socket PATH] [--format openmetrics|prometheus]

        Serves Adobe Pass AccessEnabler as JSON-RPC 2.0 (NDJSON, or LSP Content-Length framing when the
        peer starts with it) over stdin/stdout (default) or a Unix socket. Logs go to stderr. SECONDS is a
        decimal number, to the millisecond: 5, 2.5 or 0.25.


        """ + table.usage(defaults: DaemonOptions())
    }

    /// Every flag of the daemon, declared once: `--help`, the split of the command line and ``parse(_:)`` all
    /// come from it.
    static let table = OptionTable<DaemonOptions, CommandLineError>(
        [
            .init(
                "TRANSPORT",
                [
                    .flag("--stdio", help: "Serve stdin/stdout; exit 0 at end of input.", default: { $0.transport == .stdio ? "" : nil }) {
                        $0.transport = .stdio
                    },
                    .option(
                        "--socket", "PATH",
                        help: "Serve a Unix socket at PATH (file mode 0600). With LISTEN_FDS set by systemd, the inherited fd 3 "
                            + "is served instead and never unlinked."
                    ) { (options, path) throws(CommandLineError) in
                        guard !path.isEmpty else { throw .usage("--socket needs a path") }
                        options.transport = .socket(path: path)
                    },
                    .option(
                        "--socket-group", "GROUP",
                        help: "Make the socket 0660 with GROUP and allow peers in GROUP (as their primary or a supplementary group)."
                    ) { (options, group) throws(CommandLineError) in options.socketGroup = try resolveGroup(group) },
                    .option(
                        "--allow-uid", "UID",
                        help: "Also allow this peer uid (repeatable, or comma-separated); the socket becomes 0666 so it can "
                            + "connect (the peer check decides)."
                    ) { (options, list) throws(CommandLineError) in
                        for part in list.split(separator: ",") { options.allowedUIDs.insert(try resolveUser(String(part))) }
                    },
                    .option(
                        "--max-message-bytes", "N", help: "Largest accepted message in bytes.", default: { "\($0.limits.maxMessageBytes)" }
                    ) { (options, text) throws(CommandLineError) in
                        guard let bytes = Int(text), bytes >= 64 else {
                            throw .usage("--max-message-bytes needs an integer ≥ 64, got \(text)")
                        }
                        options.limits.maxMessageBytes = bytes
                    },
                    .option(
                        "--shutdown-timeout", "SECONDS", help: "Time to finish work on end of input or SIGTERM.",
                        default: { secondsText($0.limits.shutdownTimeout) }
                    ) { (options, text) throws(CommandLineError) in
                        options.limits.shutdownTimeout = try seconds("--shutdown-timeout", text)
                    },
                    .option(
                        "--stall-timeout", "SECONDS", help: "Disconnect a socket peer that reads nothing for this long.",
                        default: { secondsText($0.limits.stallTimeout) }
                    ) { (options, text) throws(CommandLineError) in
                        options.limits.stallTimeout = try seconds("--stall-timeout", text, least: 1)
                    },
                ]),
            .init(
                "BACKEND",
                [
                    .option(
                        "--backend", "URL|emulator",
                        help: "REST API V2 base URL; \"emulator\" starts pass-emulator (beside this binary) on loopback.",
                        default: { $0.backend }
                    ) { (options, url) throws(CommandLineError) in
                        if url != "emulator" { _ = try checkBackendURL(url) }
                        options.backend = url
                    },
                    .flag("--staging", help: "Use \(stagingBackend).") { $0.backend = stagingBackend },
                    .option(
                        "--software-statement", "JWT|@FILE",
                        help: "The registered application's software statement (with --backend emulator, a built-in one by default)."
                    ) { (options, statement) throws(CommandLineError) in
                        if statement == "@" { throw .usage("--software-statement @FILE needs the file's name after the @") }
                        guard statement.hasPrefix("@") || Backend.isJWT(statement) else {
                            throw .usage(
                                "--software-statement needs a JWT (three base64url parts joined by dots) or @FILE, got '\(Text.excerpt(statement))'"
                            )
                        }
                        options.softwareStatement = statement
                    },
                    .option(
                        "--state-dir", "DIR",
                        help: "Persistent state (when not given: $STATE_DIRECTORY, else $XDG_STATE_HOME/passbridge, else "
                            + "~/.local/state/passbridge). With --backend emulator and no --state-dir, a temporary directory apart from it."
                    ) { (options, directory) throws(CommandLineError) in
                        guard !directory.isEmpty else { throw .usage("--state-dir needs a path") }
                        options.stateDir = directory
                    },
                    .option(
                        "--store", "postgresql://…",
                        help: "Keep the state in this PostgreSQL database, shared by a fleet of daemons (libpq connection URI), "
                            + "instead of SQLite in the state dir."
                    ) { options, uri in options.store = uri },
                    .option(
                        "--request-timeout", "SECONDS", help: "Hard deadline of each request to the backend, connecting included.",
                        default: { secondsText($0.requestTimeout) }
                    ) { (options, text) throws(CommandLineError) in
                        options.requestTimeout = try seconds("--request-timeout", text, least: 1)
                    },
                    .option(
                        "--redirect-url", "URL", help: "Redirect URL registered for the application.", default: { $0.redirectURL }
                    ) { (options, url) throws(CommandLineError) in
                        guard RedirectURL.isValid(url) else {
                            throw .usage("--redirect-url needs an absolute URL such as \(DaemonOptions().redirectURL), got \(url)")
                        }
                        options.redirectURL = url
                    },
                    .option(
                        "--svc-mvpds", "IDS",
                        help:
                            "MVPD ids, comma-separated, whose login and logout pages the host opens in the Safari View Controller (with setOptions handleSVC); default: the configuration's requiresSVC."
                    ) { (options, text) throws(CommandLineError) in
                        let ids = text.split(separator: ",").map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
                        guard !ids.isEmpty else { throw .usage("--svc-mvpds needs MVPD ids, comma-separated, got \(text)") }
                        options.svcMVPDs = Set(ids)
                    },
                    .option("--svc-redirect-url", "URL", help: "Redirect URL of the --svc-mvpds pages; default: --redirect-url.") {
                        (options, url) throws(CommandLineError) in
                        guard RedirectURL.isValid(url) else {
                            throw .usage("--svc-redirect-url needs an absolute URL such as myapp://svc, got \(url)")
                        }
                        options.svcRedirectURL = url
                    },
                    .option(
                        "--activation-url", "URL",
                        help:
                            "The second-screen page the app hosts, reported with REGCODE (activationUrl, and url with ?code=); without it url is the authenticate URL (--backend emulator: the emulator's /activate)."
                    ) { (options, url) throws(CommandLineError) in
                        // A page the user's phone opens, told to them in REGCODE: an app's scheme would not open there.
                        // As loose as pass-emulator's --public-url, which `passbridge-call dev` makes it from.
                        let lowered = url.lowercased()
                        let rest = lowered.hasPrefix("http://") ? url.dropFirst(7) : lowered.hasPrefix("https://") ? url.dropFirst(8) : ""
                        guard let first = rest.first, first != "/", HeaderValue.isSafe(url) else {
                            throw .usage("--activation-url needs an http or https URL, such as https://example.com/activate, got \(url)")
                        }
                        options.activationURL = url
                    },
                ]),
            .init(
                "OTHER",
                [
                    .option("--log-level", "LEVEL", help: "One of \(levelNames).", default: { $0.logLevel.name }) {
                        (options, text) throws(CommandLineError) in
                        guard let level = Logger.Level(name: text) else { throw .usage("--log-level must be \(levelNames), got \(text)") }
                        options.logLevel = level
                    }
                ]),
        ],
        exclusive: [("--stdio", "--socket"), ("--staging", "--backend")],
        usageFailure: { .usage($0.message) })

    /// Parses `arguments` (without the program name; `--help` and `--version` are answered before) by ``table``.
    public static func parse(_ arguments: [String]) throws(CommandLineError) -> DaemonOptions {
        var options = DaemonOptions()
        try table.parse(arguments, into: &options)
        // Who may connect is a socket's question: on stdio these would be taken and do nothing.
        if options.transport == .stdio {
            if options.socketGroup != nil { throw .usage("--socket-group is for --socket (stdio has no socket to share)") }
            if !options.allowedUIDs.isEmpty { throw .usage("--allow-uid is for --socket (stdio has no socket to share)") }
        }
        return options
    }

    /// `trace, debug, info, warning or error`.
    private static var levelNames: String {
        let names = Logger.Level.allCases.map(\.name)
        return names.dropLast().joined(separator: ", ") + " or " + names[names.count - 1]
    }

    /// `text` as seconds from `least` milliseconds to 3600 s, to the millisecond (``Arguments/milliseconds(_:)``),
    /// or a usage error naming `name`, the range and the form.
    private static func seconds(_ name: String, _ text: String, least: Int64 = 0) throws(CommandLineError) -> Duration {
        guard let milliseconds = Arguments.milliseconds(text), (least...3_600_000).contains(milliseconds) else {
            let from = least == 0 ? "0" : secondsText(.milliseconds(least))
            throw .usage("\(name) needs seconds from \(from) to 3600, a decimal number to the millisecond, got '\(text)'")
        }
        return .milliseconds(milliseconds)
    }

    /// `duration` in seconds as `--help` shows it: `5`, or `0.25` for a fraction.
    static func secondsText(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        if attoseconds == 0 { return "\(seconds)" }
        return "\(Double(seconds) + Double(attoseconds) / 1e18)"
    }

    private static func resolveGroup(_ text: String) throws(CommandLineError) -> UInt32 {
        if let gid = UInt32(text) { return gid }
        guard let group = getgrnam(text) else { throw .failure("unknown group \(text) for --socket-group") }
        return group.pointee.gr_gid
    }

    private static func resolveUser(_ text: String) throws(CommandLineError) -> UInt32 {
        if let uid = UInt32(text) { return uid }
        guard let user = getpwnam(text) else { throw .failure("unknown user \(text) for --allow-uid") }
        return user.pointee.pw_uid
    }

    /// An absolute https URL, or http whose host is loopback (127.0.0.0/8, ::1, localhost).
    /// - Throws: `CommandLineError.usage` (exit 2) for anything else: the `--backend` flag is wrong.
    public static func checkBackendURL(_ text: String) throws(CommandLineError) -> BackendURL {
        do throws(BackendURL.Refusal) {
            return try BackendURL(text)
        } catch .notAbsolute {
            throw .usage("--backend needs an absolute URL or \"emulator\", got \(text)")
        } catch .port {
            throw .usage("--backend needs a port from 1 to 65535, got \(text)")
        } catch .notBase {
            throw .usage("--backend needs a base URL, without a user, query or fragment, got \(text)")
        } catch .plainHTTP {
            throw .usage("refusing plain http backend \(text): only loopback hosts may use http")
        } catch {
            throw .usage("--backend needs an https URL (or http to a loopback host, or \"emulator\"), got \(text)")
        }
    }
}
