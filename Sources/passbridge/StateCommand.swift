import AccessEnabler
import ArgumentParsing
import Bridge
import Glibc

/// `passbridge state list|reset|logout`: what the store holds, forgetting it here, and ending it at Adobe too (never
/// a token or a secret is shown).
enum StateCommand {
    static var usage: String {
        """
        USAGE: passbridge state list [--state-dir DIR | --store postgresql://…] [--requestor ID] [--device ID]
               passbridge state reset [--state-dir DIR | --store postgresql://…] [--requestor ID] [--device ID]
               passbridge state logout [--backend URL | --staging] [--state-dir DIR | --store postgresql://…]
                                       [--requestor ID] [--device ID]

        The store is the daemon's: --store, else --state-dir (which must exist), else the default state directory.


        """ + table.usage(defaults: Options(), column: 26)
    }

    /// What `passbridge state` is told besides its action.
    struct Options: Sendable {
        var stateDir: String?
        var store: String?
        /// `--requestor` and `--device`.
        var selection = LoginSelection()
        /// `--backend` or `--staging`, for `logout` only.
        var backend: String?
    }

    /// The actions and options of `passbridge state`, each declared once.
    static let table = OptionTable<Options, UsageError>(
        [actions, options], exclusive: [("--backend", "--staging"), ("--state-dir", "--store")])

    private static let resetHelp: String =
        "Deletes the logins here only (those of --requestor and --device, when given), their selected MVPD and cached authorization "
        + "expiries; DCR registrations and the device identifier stay. Adobe still has the logins until a logout: the next "
        + "setRequestor on this device finds them again. To end them, use logout."
    private static let logoutHelp: String =
        "Ends the logins at the backend (REST API V2 logout per MVPD, with the stored client credentials and device; no "
        + "page is opened), then deletes each one ended here, and each one the backend says it no longer has (an error whose "
        + "action is authentication). One the backend could not be asked about, or refused otherwise, stays stored and is "
        + "named (exit 1), and so is one the backend ended that the store could not delete (its lock held by another "
        + "process, the database away); logins of other backends are left alone, and their backends named. What was ended "
        + "is said on stdout, what was not on stderr."

    private static let actions = OptionTable<Options, UsageError>.Section(
        "ACTIONS",
        arguments: [
            ("list", "One line per login: requestor, MVPD, user id, expiry (UTC), device, backend; the store they are of on stderr."),
            ("reset", resetHelp),
            ("logout", logoutHelp),
        ], [])

    private static let options = OptionTable<Options, UsageError>.Section(
        "OPTIONS",
        [
            .option("--state-dir", "DIR", help: "The daemon's state directory (passbridge --help tells its default).") {
                (options, directory) throws(UsageError) in
                // An empty value (an unset variable in a script) is not the default directory.
                guard !directory.isEmpty else { throw UsageError("--state-dir needs a path") }
                options.stateDir = directory
            },
            .option("--store", "postgresql://…", help: "The daemon's PostgreSQL store, used instead of the state directory.") {
                options, uri in options.store = uri
            },
            .option("--requestor", "ID", help: "Only the logins of this requestor.") {
                (options, requestor) throws(UsageError) in
                // An empty value (an unset variable in a script) matched no login: a reset of nothing, exit 0.
                guard !requestor.isEmpty else { throw UsageError("--requestor needs a requestor id") }
                options.selection.requestor = requestor
            },
            .option("--device", "ID", help: "Only the logins of this device (list's DEVICE column: a fleet's deviceIdentifier).") {
                (options, device) throws(UsageError) in
                guard !device.isEmpty else { throw UsageError("--device needs a device id") }
                options.selection.device = device
            },
            .option("--backend", "URL", help: "logout: the REST API V2 base URL the logins were made at.", default: backendDefault) {
                options, url in options.backend = url
            },
            .flag("--staging", help: "logout: Adobe's staging backend, as passbridge --staging.") {
                $0.backend = DaemonOptions.stagingBackend
            },
        ])

    private static let backendDefault: @Sendable (Options) -> String? = { _ in DaemonOptions().backend }

    static let program = CommandLineProgram(name: "passbridge state", version: DaemonOptions.version, usage: usage)

    /// Runs the subcommand; returns the exit code (0; 1 on a store failure, a missing state directory, or a login
    /// logout could not end or delete; 2 on bad usage).
    static func run(_ arguments: [String]) -> Int32 {
        if let status = program.helpOrVersion(arguments) { return status }
        var options = Options()
        let action: String
        let backend: BackendURL
        do throws(UsageError) {
            let parsed = try table.parse(arguments, into: &options, positionals: 1)
            guard let first = parsed.positionals.first else { throw UsageError("say list, reset or logout") }
            guard ["list", "reset", "logout"].contains(first) else { throw UsageError("unexpected argument \(first)") }
            guard options.backend == nil || first == "logout" else { throw UsageError("--backend and --staging are for logout only") }
            action = first
            backend = try logoutBackend(options.backend)
        } catch {
            return program.usageError(error)
        }
        let (stateDir, store, only) = (options.stateDir, options.store, options.selection)
        do {
            let directory = try StateDirectory.resolve(stateDir)
            if store == nil {
                // A --state-dir that does not exist is a mistake; the default one not existing yet means nothing was stored.
                // One this user may not reach (the daemon's, mode 0700), or a link loop, is no store missing.
                var info = stat()
                let statError = stat(directory, &info) == 0 ? 0 : errno
                if statError != 0, statError != ENOENT, statError != ENOTDIR { return unreadable(directory, statError) }
                let exists = statError == 0 && info.st_mode & S_IFMT == S_IFDIR
                guard exists || stateDir == nil else {
                    return program.failure(
                        "no state directory \(directory) (passbridge --help tells the default; --state-dir names another)")
                }
                if exists, access(directory + "/passbridge.sqlite", F_OK) != 0, errno != ENOENT {
                    return unreadable(directory + "/passbridge.sqlite", errno)
                }
                if !exists || access(directory + "/passbridge.sqlite", F_OK) != 0 {
                    writeOut(action == "reset" ? "deleted 0 logins\n" : "no logins (no store in \(directory))\n")
                    // The default directory is this user's: someone looking for a daemon's logins (the packaged one's
                    // are in /var/lib/passbridge, `passbridge-call dev`'s in a directory of its own) is told where to look.
                    if stateDir == nil, getenv("STATE_DIRECTORY") == nil {
                        writeError(
                            "passbridge state: a daemon with a state directory of its own keeps its logins there: name it with "
                                + "--state-dir DIR (passbridge-call dev's: the store it printed; the packaged daemon's: "
                                + "sudo -u passbridge passbridge state … --state-dir /var/lib/passbridge)")
                    }
                    return 0
                }
            }
            let opened = try StoreSetup.open(store: store, stateDirectory: directory, logsFailures: false)
            // As the daemon does at exit: SQLite folds its write-ahead log into passbridge.sqlite, so that the file
            // alone is a complete copy again (a reset's deletions included).
            defer { opened.close() }
            switch action {
            case "reset":
                let deleted = try StoreSetup.blocking { try await opened.reset(only) }
                writeOut(
                    "deleted \(deleted) login\(deleted == 1 ? "" : "s") from \(opened.location) (here only: Adobe still has "
                        + "\(deleted == 1 ? "it" : "them") until a logout, and the next setRequestor on this device finds "
                        + "\(deleted == 1 ? "it" : "them") again; passbridge state logout ends logins at Adobe too)\n")
                return 0
            case "logout":
                return try logout(opened, backend: backend, only)
            default:
                let logins = try StoreSetup.blocking { try await opened.logins() }.filter(only.contains)
                writeOut(listing(logins, only, location: opened.location))
                // Which store the table is of, beside it on stderr (the table's lines stay the logins): an operator
                // who left out --store read the default directory's logins as the fleet's.
                if !logins.isEmpty { writeError("passbridge state: the logins of \(opened.location)") }
                return 0
            }
        } catch let error as CommandLineError {
            if case .failure(let message) = error { return program.failure(message) }
            return 1
        } catch {
            // Named by its file (a PostgreSQL URI may hold a password, and is not repeated).
            let file = (try? StateDirectory.resolve(stateDir)).map { $0 + "/passbridge.sqlite" } ?? "the store"
            let named = store != nil ? "the PostgreSQL store" : file
            return program.failure("\(named): \(error)")
        }
    }

    /// `path` could not be reached for `error` (an errno): exit 1, and for a permission, who may read it.
    private static func unreadable(_ path: String, _ error: Int32) -> Int32 {
        let who = error == EACCES || error == EPERM ? " (run this as the user the daemon runs as, e.g. sudo -u passbridge)" : ""
        return program.failure("cannot read \(path): \(String(cString: strerror(error)))\(who)")
    }

    /// `--backend` (or `--staging`, or the default) as a URL; `emulator` is no backend the logins could be at.
    private static func logoutBackend(_ given: String?) throws(UsageError) -> BackendURL {
        let text = given ?? DaemonOptions().backend
        guard text != "emulator" else {
            throw UsageError("logout needs the backend's URL (for an emulator: the URL pass-emulator printed)")
        }
        do throws(CommandLineError) {
            return try DaemonOptions.checkBackendURL(text)
        } catch {
            guard case .usage(let message) = error else { throw UsageError("\(error)") }
            throw UsageError(message)
        }
    }

    /// `logout`: one line per login tried, then what was ended and what was not; 1 when one could not be ended, or
    /// was ended and could not be deleted.
    private static func logout(_ store: TokenStore, backend: BackendURL, _ selection: LoginSelection) throws -> Int32 {
        let defaults = DaemonOptions()
        let outcomes = try StoreSetup.blocking {
            try await store.logOut(atBackend: backend, selection, redirectURL: defaults.redirectURL, timeout: defaults.requestTimeout)
        }
        var base = backend.text
        while base.hasSuffix("/") { base.removeLast() }
        let others = try StoreSetup.blocking { try await store.logins() }.filter { selection.contains($0) && $0.backend != base }
        // What was done on stdout; what could not be, on stderr (with exit 1).
        var text = ""
        var problems = ""
        for outcome in outcomes {
            let login = outcome.login
            let who = [login.requestor, login.mvpd, login.userID ?? "-", login.device].map(printable).joined(separator: " ")
            if let failure = outcome.failure {
                problems += "not ended: \(who): \(printable("\(failure)"))\n"
            } else if let stillStored = outcome.stillStored {
                problems += "ended but still stored: \(who): \(printable("\(stillStored)"))\n"
            } else {
                text += "ended: \(who)\n"
            }
        }
        let failed = outcomes.filter { $0.failure != nil }.count
        let stillStored = outcomes.filter { $0.stillStored != nil }.count
        let ended = outcomes.count - failed - stillStored
        if ended > 0 {
            text +=
                "ended \(ended) login\(ended == 1 ? "" : "s") at \(base) and deleted \(ended == 1 ? "it" : "them") from \(store.location)\n"
        } else if stillStored == 0 {
            text += "ended no login at \(base)\n"
        }
        if stillStored > 0 {
            problems +=
                "ended \(stillStored) login\(stillStored == 1 ? "" : "s") at \(base) that \(store.location) still holds (the store "
                + "failed deleting \(stillStored == 1 ? "it" : "them")): run passbridge state logout again, or passbridge state reset\n"
        }
        if failed > 0 {
            problems +=
                "could not end \(failed) login\(failed == 1 ? "" : "s") at \(base): kept in \(store.location); run passbridge state "
                + "logout again once the reason given for each, above, is gone (passbridge state reset forgets logins here "
                + "only)\n"
        }
        if !others.isEmpty {
            let backends = Set(others.map(\.backend)).sorted().map(printable).joined(separator: ", ")
            text +=
                "left \(others.count) login\(others.count == 1 ? "" : "s") of other backends (\(backends)): passbridge state "
                + "logout --backend URL ends them there\n"
        }
        writeOut(text)
        writeErrorLines(problems)
        return failed + stillStored > 0 ? 1 : 0
    }

    /// What `list` prints: the table, or one line saying there are no logins (of the selection's requestor and
    /// device, when given) in `location`.
    static func listing(_ logins: [StoredLogin], _ selection: LoginSelection, location: String) -> String {
        guard logins.isEmpty else { return table(logins) }
        let requestor = selection.requestor.map { " for requestor \(printable($0))" } ?? ""
        let device = selection.device.map { " on device \(printable($0))" } ?? ""
        return "no logins\(requestor)\(device) in \(location)\n"
    }

    /// `2026-12-02T06:34:30Z`: ISO 8601 in UTC, to the second.
    static func utcTime(milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var text = [CChar](repeating: 0, count: 32)
        let count = strftime(&text, text.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
        return String(decoding: text.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Aligned columns with a header; strings are shown JSON-escaped when they hold control characters.
    static func table(_ logins: [StoredLogin]) -> String {
        var rows = [["REQUESTOR", "MVPD", "USER", "EXPIRES", "DEVICE", "BACKEND"]]
        for login in logins {
            let expires = utcTime(milliseconds: login.notAfter)
            rows.append([login.requestor, login.mvpd, login.userID ?? "-", expires, login.device, login.backend].map(printable))
        }
        let widths = (0..<6).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            zip(row, widths).enumerated().map { index, cell in
                index == 5 ? cell.0 : cell.0 + String(repeating: " ", count: max(0, cell.1 - cell.0.count))
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }

    private static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else { return text }
        return text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? unicodeEscape($0.value) : String($0) }.joined()
    }

    /// `\u001b` for U+001B: four lower-case hex digits.
    private static func unicodeEscape(_ value: UInt32) -> String {
        let hex = String(value, radix: 16)
        return "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
