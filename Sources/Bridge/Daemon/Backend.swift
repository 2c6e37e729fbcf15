import AccessEnabler
import Glibc
import JSONRPC

/// What the backend and state flags resolve to (`passbridge --help`): the engine template every
/// connection starts from, the shared store, and the emulator child when `--backend emulator` started one.
struct Backend {
    let configuration: BridgeConfiguration
    let emulator: EmulatorChild?
    /// The temporary state directory of `--backend emulator` without `--state-dir`, removed at exit.
    var temporaryStateDirectory: String?

    /// What is served, for the start-up line: "backend URL, store LOCATION" (`--backend emulator`: "backend
    /// pass-emulator at URL"; the store's file, or its PostgreSQL URL without the password: `TokenStore.location`).
    var description: String {
        let backend = emulator.map { "pass-emulator at \($0.baseURL.text)" } ?? configuration.engine.backendURL.text
        return "backend \(backend), store \(configuration.store.location)"
    }

    /// Closes the store, stops the emulator child (SIGKILL at `deadline` if it has not stopped by then) and removes
    /// the temporary state directory.
    func stop(by deadline: ContinuousClock.Instant) {
        // A store whose server stopped answering must not keep the daemon from exiting (Lifecycle 6): it is left at
        // `deadline`, or a second from now when that has passed, and its last writes with it (a cache's; a durable
        // write is reported only once it is made).
        if !configuration.store.close(by: max(deadline, .now + .seconds(1))) {
            Logger(label: "store").warning("the store was still busy at the shutdown deadline; exiting without closing it")
        }
        emulator?.stop(by: deadline)
        if let temporaryStateDirectory { StoreSetup.removeEmulatorStateDirectory(temporaryStateDirectory) }
    }

    /// Reads `--software-statement @FILE`, checks the backend URL (https, or http on loopback only), starts
    /// the emulator when asked, and opens the store (`--store`, else SQLite in the state directory, created
    /// 0700, its files kept 0600; with `--backend emulator` and no `--state-dir`, a temporary one).
    /// A temporary state directory is made through `stopper`, so that a signal that ends the process (one during
    /// start-up, a second one later) removes it, however soon after it was made.
    /// - Throws: `CommandLineError.failure` with one line for stderr (exit 1).
    static func start(_ options: DaemonOptions, stopper: Stopper) throws(CommandLineError) -> Backend {
        var softwareStatement = try readSoftwareStatement(options.softwareStatement)
        var missingStatementHelp: String?
        if let value = options.softwareStatement, value.hasPrefix("@"), softwareStatement == nil {
            missingStatementHelp = Self.emptyStatementHelp(file: String(value.dropFirst()))
            Logger(label: "passbridge").warning("no software statement: \(missingStatementHelp ?? "")")
        } else if options.softwareStatement == nil, options.backend != "emulator" {
            // No warning here: a host that gives each instance its statement in init is served as it should be.
            missingStatementHelp =
                "passbridge was started without --software-statement: pass --software-statement JWT|@FILE (the "
                + "statement Adobe issued for the application), or softwareStatement in init"
        }
        let temporary = options.backend == "emulator" && options.stateDir == nil && options.store == nil
        // A temporary directory holds client credentials and tokens: a signal that ends the process removes it too.
        let stateDirectory =
            temporary
            ? try stopper.make(StoreSetup.emulatorStateDirectory, undoneBeforeForcedExitBy: StoreSetup.removeEmulatorStateDirectory)
            : try StateDirectory.resolve(options.stateDir)
        if temporary {
            // Debug, as the emulator's own line: `passbridge state list --state-dir` can be pointed at it meanwhile.
            Logger(label: "passbridge").debug("temporary state directory \(stateDirectory) (removed at exit)")
        }
        var emulator: EmulatorChild?
        let backendURL: BackendURL
        var activationURL = options.activationURL
        if options.backend == "emulator" {
            let child: EmulatorChild
            do {
                child = try EmulatorChild.launch()
            } catch {
                if temporary { StoreSetup.removeEmulatorStateDirectory(stateDirectory) }
                throw error
            }
            emulator = child
            backendURL = child.baseURL
            softwareStatement = softwareStatement ?? EmulatorChild.developmentSoftwareStatement
            // The emulator serves its own second-screen page, which takes the code as `?code=`.
            let base = child.baseURL.text
            activationURL = activationURL ?? (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/activate"
        } else {
            backendURL = try DaemonOptions.checkBackendURL(options.backend)
        }
        let store: TokenStore
        do {
            // A temporary directory (no --store, so no PostgreSQL to wait for) is prepared out of a signal's way.
            let open = { () throws(CommandLineError) -> TokenStore in
                try StoreSetup.open(store: options.store, stateDirectory: stateDirectory, lookInterval: options.storeLookInterval)
            }
            store = try temporary ? stopper.starting(open) : open()
        } catch {
            emulator?.stop(by: .now + .seconds(1))
            if temporary { StoreSetup.removeEmulatorStateDirectory(stateDirectory) }
            throw error
        }
        var engine = AccessEnablerConfiguration(
            backendURL: backendURL, softwareStatement: softwareStatement,
            redirectURL: options.redirectURL, activationURL: activationURL,
            requestTimeout: options.requestTimeout,
            log: Logger.sink(label: "engine"))
        engine.missingStatementHelp = missingStatementHelp
        if let pollInterval = options.pollInterval { engine.pollInterval = pollInterval }
        if let logoutTimeout = options.logoutTimeout { engine.logoutTimeout = logoutTimeout }
        engine.svcMVPDs = options.svcMVPDs
        engine.svcRedirectURL = options.svcRedirectURL
        return Backend(
            configuration: BridgeConfiguration(engine: engine, store: store), emulator: emulator,
            temporaryStateDirectory: temporary ? stateDirectory : nil)
    }

    /// A JWT as given, or the trimmed content of FILE for `@FILE`; nil when the flag is absent or FILE holds only
    /// whitespace or a `#` comment (the packaged unit's credential before a statement is installed: its
    /// `SetCredential=` default is such a comment; the daemon then serves, and setRequestor fails with R400 saying
    /// where the statement goes).
    /// - Throws: `CommandLineError.failure` when FILE cannot be read.
    static func readSoftwareStatement(_ value: String?) throws(CommandLineError) -> String? {
        guard let value else { return nil }
        guard value.hasPrefix("@") else { return value }
        let path = String(value.dropFirst())
        let bytes = try readStatementFile(path)
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .failure("cannot read the software statement file \(path): it is not UTF-8 text")
        }
        // A byte-order mark (a file saved by a Windows editor) is no part of the statement.
        let statement = String(text.drop { $0 == "\u{FEFF}" }).trimmingWhitespace()
        if statement.isEmpty || statement.hasPrefix("#") { return nil }
        guard isJWT(statement) else {
            throw .failure("cannot read the software statement file \(path): it holds no JWT (three base64url parts joined by dots)")
        }
        return statement
    }

    /// Whether `text` has a JWT's shape (RFC 7519, compact serialization): three parts joined by dots, the header
    /// and the payload not empty, each of base64url's characters. A software statement is one; the backend checks
    /// the rest.
    static func isJWT(_ text: String) -> Bool {
        let parts = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else { return false }
        return parts.allSatisfy { part in
            part.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "="):
                    true
                default: false
                }
            }
        }
    }

    /// A software statement is a JWT of a few KB; a larger file is not one.
    static let statementFileLimit = 64 * 1024

    /// The whole regular file at `path` (opened without blocking, so a FIFO or a device is refused rather than
    /// waited on or read without end), at most `statementFileLimit` bytes.
    /// - Throws: `CommandLineError.failure` saying why not.
    private static func readStatementFile(_ path: String) throws(CommandLineError) -> [UInt8] {
        func refused(_ reason: String) -> CommandLineError { .failure("cannot read the software statement file \(path): \(reason)") }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw refused(String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw refused(String(cString: strerror(errno))) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw refused("not a regular file") }
        guard info.st_size <= statementFileLimit else {
            throw refused("\(info.st_size) bytes, more than a software statement's \(statementFileLimit)")
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + filled, $0.count - filled) }
            if count == 0 { break }  // the file shrank meanwhile
            if count < 0 {
                if errno == EINTR { continue }
                throw refused(String(cString: strerror(errno)))
            }
            filled += count
        }
        return Array(bytes.prefix(filled))
    }

    /// Where a missing statement goes, for the R400 `details` and the start-up warning: under systemd
    /// (`$CREDENTIALS_DIRECTORY` set, as the packaged unit's `LoadCredential=` does), the packaged unit's file
    /// (Clients/systemd/README.md); else `file` itself, or the flag.
    static func emptyStatementHelp(
        file: String, underSystemd: Bool = getenv("CREDENTIALS_DIRECTORY") != nil
    ) -> String {
        guard underSystemd else {
            return "\(file) holds no software statement: put the one Adobe issued for the application in it, or pass "
                + "--software-statement JWT, or softwareStatement in init"
        }
        return "\(file) holds no software statement: put the one Adobe issued for the application in "
            + "/etc/passbridge/software-statement (mode 0600), then systemctl restart passbridge.service; else pass "
            + "--software-statement JWT|@FILE, or softwareStatement in init"
    }
}

/// The state directory rule: `--state-dir`, else `$STATE_DIRECTORY` (systemd; the first of a colon list),
/// else `$XDG_STATE_HOME/passbridge`, else `~/.local/state/passbridge`.
public enum StateDirectory {
    /// - Parameter environment: looks a variable up; `getenv` by default (not `ProcessInfo`, whose environment
    ///   dictionary would be built at every start-up for three names).
    public static func resolve(
        _ flag: String?, environment: (String) -> String? = { getenv($0).map { String(cString: $0) } }
    ) throws(CommandLineError) -> String {
        if let flag, !flag.isEmpty { return flag }
        if let systemd = environment("STATE_DIRECTORY"), let first = systemd.split(separator: ":").first {
            return String(first)
        }
        if let xdg = environment("XDG_STATE_HOME"), xdg.hasPrefix("/") { return xdg + "/passbridge" }
        guard let home = environment("HOME"), !home.isEmpty else {
            throw .failure("no state directory: pass --state-dir (HOME, XDG_STATE_HOME and STATE_DIRECTORY are unset)")
        }
        return home + "/.local/state/passbridge"
    }
}

extension Logger {
    /// Where the engine's and the store's log lines go (`AccessEnablerConfiguration.log`,
    /// `TokenStore(postgreSQL:log:)`): to stderr under `label`, each at the daemon's level of its `EngineLogLevel`.
    static func sink(label: String) -> EngineLog {
        let logger = Logger(label: label)
        return { level, line in
            switch level {
            case .debug: logger.debug(line())
            case .info: logger.info(line())
            case .warning: logger.warning(line())
            case .error: logger.error(line())
            }
        }
    }
}
