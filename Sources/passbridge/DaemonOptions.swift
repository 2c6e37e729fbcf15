import Glibc
import JSONRPC

/// Everything the command line says (DESIGN §3 "Command line"), parsed by hand with
/// swift-argument-parser's error model: ``CommandLineError``.
struct DaemonOptions {
    enum Transport: Equatable {
        case stdio
        case socket(path: String)
    }

    static let version = "0.1.0"
    static let defaultBackend = "https://sp.auth.adobe.com"
    static let stagingBackend = "https://sp.auth-staging.adobe.com"

    var transport: Transport = .stdio
    /// REST V2 base URL, or `"emulator"` (start pass-emulator as a child).
    var backend = DaemonOptions.defaultBackend
    /// `--software-statement`: a JWT, or `@FILE` as given (the bridge reads the file).
    var softwareStatement: String?
    /// `--state-dir`; nil = `$STATE_DIRECTORY`, else `$XDG_STATE_HOME/passbridge`, else `~/.local/state/passbridge`.
    var stateDir: String?
    /// `--store postgresql://…`: the fleet's shared store instead of SQLite in the state directory.
    var store: String?
    var redirectURL: String?
    var activationURL: String?
    /// `--socket-group` resolved to a gid.
    var socketGroup: UInt32?
    var allowedUIDs: Set<UInt32> = []
    var logLevel: Logger.Level = .info
    var maxMessageBytes = 16 << 20
    /// `--shutdown-timeout` in seconds.
    var shutdownTimeout: Duration = .seconds(5)
    /// `--stall-timeout` in seconds: a socket peer that reads nothing this long is disconnected.
    var stallTimeout: Duration = .seconds(10)
    /// `--test-methods`: serve the JSON-RPC 2.0 spec §7 sample methods (tests only).
    var testMethods = false
    /// `--relay PATH`: copy stdin/stdout to and from the socket at PATH (helper of Clients/shell).
    var relayPath: String?

    /// The connection limits these options set.
    var limits: ConnectionLimits {
        var limits = ConnectionLimits()
        limits.maxMessageBytes = maxMessageBytes
        limits.shutdownTimeout = shutdownTimeout
        limits.stallTimeout = stallTimeout
        return limits
    }
}

/// How parsing the command line ended when it did not produce options.
enum CommandLineError: Error {
    /// Bad usage: print the message and a pointer to `--help` on one line on stderr, exit 2.
    case usage(String)
    /// A valid request that cannot be met: one line on stderr, exit 1.
    case failure(String)
    /// `--help`: usage on stdout, exit 0.
    case help
    /// `--version`: version on stdout, exit 0.
    case version
}

extension DaemonOptions {
    static let usage = """
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
                                      "emulator" starts pass-emulator on loopback.
          --staging                   Use \(stagingBackend).
          --software-statement JWT|@FILE
                                      The registered application's software statement
                                      (with --backend emulator, a built-in one by default).
          --state-dir DIR             Persistent state (default $STATE_DIRECTORY, $XDG_STATE_HOME/passbridge
                                      or ~/.local/state/passbridge). With --backend emulator and no
                                      --state-dir, a temporary directory apart from it.
          --store postgresql://…      Keep the state in this PostgreSQL database, shared by a fleet of
                                      daemons (libpq connection URI), instead of SQLite in the state dir.
          --redirect-url URL          Redirect URL registered for the application.
          --activation-url URL        Second-screen activation URL reported with REGCODE.

        OTHER:
          --log-level LEVEL           trace, debug, info (default), warning or error.
          --relay PATH                Copy stdin to the socket at PATH and its replies to stdout (for scripts);
                                      exit 1 if the daemon closes before every request is answered.
          --test-methods              For tests only: serve the JSON-RPC 2.0 spec's sample methods.
          --help                      Show this help.
          --version                   Show the version.

        """

    /// Parses `arguments` (without the program name).
    static func parse(_ arguments: [String]) throws(CommandLineError) -> DaemonOptions {
        var options = DaemonOptions()
        var sawStdio = false
        var socketPath: String?
        var sawBackend = false
        var sawStaging = false
        var index = 0
        while index < arguments.count {
            var argument = arguments[index]
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                inlineValue = String(argument[argument.index(after: equals)...])
                argument = String(argument[..<equals])
            }
            index += 1
            func value() throws(CommandLineError) -> String {
                if let inlineValue { return inlineValue }
                guard index < arguments.count else { throw .usage("missing value for \(argument)") }
                index += 1
                return arguments[index - 1]
            }
            func noValue() throws(CommandLineError) {
                if inlineValue != nil { throw .usage("\(argument) takes no value") }
            }
            switch argument {
            case "-h", "--help": throw .help
            case "--version": throw .version
            case "--stdio":
                try noValue()
                sawStdio = true
            case "--socket": socketPath = try value()
            case "--socket-group": options.socketGroup = try resolveGroup(try value())
            case "--allow-uid":
                for part in try value().split(separator: ",") {
                    options.allowedUIDs.insert(try resolveUser(String(part)))
                }
            case "--max-message-bytes":
                let text = try value()
                guard let bytes = Int(text), bytes >= 64 else { throw .usage("--max-message-bytes needs an integer ≥ 64, got \(text)") }
                options.maxMessageBytes = bytes
            case "--shutdown-timeout", "--stall-timeout":
                let text = try value()
                guard let seconds = Double(text), seconds >= 0, seconds <= 3600 else {
                    throw .usage("\(argument) needs seconds between 0 and 3600, got \(text)")
                }
                if argument == "--stall-timeout" {
                    options.stallTimeout = .milliseconds(Int64(seconds * 1000))
                } else {
                    options.shutdownTimeout = .milliseconds(Int64(seconds * 1000))
                }
            case "--log-level":
                let text = try value()
                guard let level = Logger.Level(name: text) else { throw .usage("--log-level must be trace, debug, info, warning or error, got \(text)") }
                options.logLevel = level
            case "--backend":
                options.backend = try value()
                sawBackend = true
            case "--staging":
                try noValue()
                sawStaging = true
                options.backend = stagingBackend
            case "--software-statement": options.softwareStatement = try value()
            case "--state-dir": options.stateDir = try value()
            case "--store": options.store = try value()
            case "--redirect-url": options.redirectURL = try value()
            case "--activation-url": options.activationURL = try value()
            case "--test-methods":
                try noValue()
                options.testMethods = true
            case "--relay": options.relayPath = try value()
            default:
                throw .usage(argument.hasPrefix("-") ? "unknown option \(argument)" : "unexpected argument \(argument)")
            }
        }
        if sawStdio && socketPath != nil { throw .usage("--stdio and --socket cannot be combined") }
        if sawStaging && sawBackend { throw .usage("--staging and --backend cannot be combined") }
        if let socketPath {
            guard !socketPath.isEmpty else { throw .usage("--socket needs a path") }
            options.transport = .socket(path: socketPath)
        }
        return options
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
