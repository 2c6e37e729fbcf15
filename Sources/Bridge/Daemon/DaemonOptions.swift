import ArgumentParsing
import Glibc
import JSONRPC

/// Everything the daemon's command line says (`passbridge --help`; the flags are described in README.md),
/// parsed with swift-argument-parser's conventions (``ArgumentParsing/Arguments``).
public struct DaemonOptions: Sendable {
    public enum Transport: Equatable, Sendable {
        case stdio
        case socket(path: String)
    }

    public static let version = "0.1.0"
    static let defaultBackend = "https://sp.auth.adobe.com"
    static let stagingBackend = "https://sp.auth-staging.adobe.com"

    public var transport: Transport = .stdio
    /// REST V2 base URL, or `"emulator"` (start pass-emulator as a child).
    public var backend = DaemonOptions.defaultBackend
    /// `--software-statement`: a JWT, or `@FILE` as given (the bridge reads the file).
    public var softwareStatement: String?
    /// `--state-dir`; nil = `$STATE_DIRECTORY`, else `$XDG_STATE_HOME/passbridge`, else `~/.local/state/passbridge`.
    public var stateDir: String?
    /// `--store postgresql://…`: the fleet's shared store instead of SQLite in the state directory.
    public var store: String?
    public var redirectURL: String?
    public var activationURL: String?
    /// `--socket-group` resolved to a gid.
    public var socketGroup: UInt32?
    public var allowedUIDs: Set<UInt32> = []
    public var logLevel: Logger.Level = .info
    public var maxMessageBytes = 16 << 20
    /// `--shutdown-timeout` in seconds.
    public var shutdownTimeout: Duration = .seconds(5)
    /// `--stall-timeout` in seconds: a socket peer that reads nothing this long is disconnected.
    public var stallTimeout: Duration = .seconds(10)
    /// `--request-timeout` in seconds: the hard deadline of each HTTP request to the backend.
    public var requestTimeout: Duration = .seconds(15)

    /// The connection limits these options set.
    public var limits: ConnectionLimits {
        var limits = ConnectionLimits()
        limits.maxMessageBytes = maxMessageBytes
        limits.shutdownTimeout = shutdownTimeout
        limits.stallTimeout = stallTimeout
        return limits
    }
}

/// Why the daemon cannot start as asked.
public enum CommandLineError: Error {
    /// Bad usage: one line on stderr with a pointer to `--help`, exit 2.
    case usage(String)
    /// A valid request that cannot be met: one line on stderr, exit 1.
    case failure(String)
}

extension DaemonOptions {
    /// `passbridge --help`.
    public static let usage = """
        USAGE: passbridge [--stdio | --socket PATH] [options]
               passbridge state list|reset [--state-dir DIR | --store URL] [--requestor ID]

        Serves Adobe Pass AccessEnabler as JSON-RPC 2.0 (NDJSON, or LSP Content-Length framing when the
        peer starts with it) over stdin/stdout (default) or a Unix socket. Logs go to stderr.

        TRANSPORT:
          --stdio                     Serve stdin/stdout (default); exit 0 at end of input.
          --socket PATH               Serve a Unix socket at PATH (file mode 0600). With LISTEN_FDS set by
                                      systemd, the inherited fd 3 is served instead and never unlinked.
          --socket-group GROUP        Make the socket 0660 with GROUP and allow peers in GROUP (as their
                                      primary or a supplementary group).
          --allow-uid UID             Also allow this peer uid (repeatable, or comma-separated); the
                                      socket becomes 0666 so it can connect (the peer check decides).
          --max-message-bytes N       Largest accepted message in bytes (default 16777216).
          --shutdown-timeout SECONDS  Time to finish work on end of input or SIGTERM (default 5).
          --stall-timeout SECONDS     Disconnect a socket peer that reads nothing for this long (default 10).

        BACKEND:
          --backend URL|emulator      REST API V2 base URL (default \(defaultBackend));
                                      "emulator" starts pass-emulator (beside this
                                      binary) on loopback.
          --staging                   Use \(stagingBackend).
          --software-statement JWT|@FILE
                                      The registered application's software statement
                                      (with --backend emulator, a built-in one by default).
          --state-dir DIR             Persistent state (default $STATE_DIRECTORY, $XDG_STATE_HOME/passbridge
                                      or ~/.local/state/passbridge). With --backend emulator and no
                                      --state-dir, a temporary directory apart from it.
          --store postgresql://…      Keep the state in this PostgreSQL database, shared by a fleet of
                                      daemons (libpq connection URI), instead of SQLite in the state dir.
          --request-timeout SECONDS   Hard deadline of each request to the backend, connecting included
                                      (default 15).
          --redirect-url URL          Redirect URL registered for the application.
          --activation-url URL        Second-screen activation URL reported with REGCODE.

        OTHER:
          --log-level LEVEL           trace, debug, info (default), warning or error.
          --help                      Show this help.
          --version                   Show the version.

        """

    static let valued: Set<String> = [
        "--socket", "--socket-group", "--allow-uid", "--max-message-bytes", "--shutdown-timeout", "--stall-timeout",
        "--request-timeout", "--log-level", "--backend", "--software-statement", "--state-dir", "--store", "--redirect-url",
        "--activation-url",
    ]
    static let flags: Set<String> = ["--stdio", "--staging"]

    /// Parses `arguments` (without the program name; `--help` and `--version` are answered before).
    public static func parse(_ arguments: [String]) throws(CommandLineError) -> DaemonOptions {
        let parsed: Arguments
        do throws(UsageError) {
            parsed = try Arguments(arguments, valued: valued, flags: flags)
        } catch {
            throw .usage(error.message)
        }
        var options = DaemonOptions()
        if let group = parsed.value("--socket-group") { options.socketGroup = try resolveGroup(group) }
        for list in parsed.values("--allow-uid") {
            for part in list.split(separator: ",") { options.allowedUIDs.insert(try resolveUser(String(part))) }
        }
        if let text = parsed.value("--max-message-bytes") {
            guard let bytes = Int(text), bytes >= 64 else { throw .usage("--max-message-bytes needs an integer ≥ 64, got \(text)") }
            options.maxMessageBytes = bytes
        }
        if let seconds = try seconds(parsed, "--shutdown-timeout") { options.shutdownTimeout = seconds }
        if let seconds = try seconds(parsed, "--stall-timeout") { options.stallTimeout = seconds }
        if let seconds = try seconds(parsed, "--request-timeout") {
            guard seconds > .zero else { throw .usage("--request-timeout needs more than 0 seconds") }
            options.requestTimeout = seconds
        }
        if let text = parsed.value("--log-level") {
            guard let level = Logger.Level(name: text) else {
                throw .usage("--log-level must be trace, debug, info, warning or error, got \(text)")
            }
            options.logLevel = level
        }
        if parsed.has("--staging") {
            if parsed.value("--backend") != nil { throw .usage("--staging and --backend cannot be combined") }
            options.backend = stagingBackend
        }
        options.backend = parsed.value("--backend") ?? options.backend
        options.softwareStatement = parsed.value("--software-statement")
        options.stateDir = parsed.value("--state-dir")
        options.store = parsed.value("--store")
        options.redirectURL = parsed.value("--redirect-url")
        options.activationURL = parsed.value("--activation-url")
        if let socketPath = parsed.value("--socket") {
            if parsed.has("--stdio") { throw .usage("--stdio and --socket cannot be combined") }
            guard !socketPath.isEmpty else { throw .usage("--socket needs a path") }
            options.transport = .socket(path: socketPath)
        }
        return options
    }

    /// The seconds given to `name` (0 to 3600, fractions allowed), nil when absent.
    private static func seconds(_ parsed: Arguments, _ name: String) throws(CommandLineError) -> Duration? {
        guard let text = parsed.value(name) else { return nil }
        guard let seconds = Double(text), seconds >= 0, seconds <= 3600 else {
            throw .usage("\(name) needs seconds between 0 and 3600, got \(text)")
        }
        return .milliseconds(Int64(seconds * 1000))
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
}
