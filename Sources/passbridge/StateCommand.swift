import AccessEnabler
import ArgumentParsing
import Bridge
import FoundationEssentials

/// `passbridge state list|reset`: what the store holds, and forgetting it (never a token or a secret is shown).
enum StateCommand {
    static var usage: String {
        """
        USAGE: passbridge state list [--state-dir DIR | --store postgresql://…] [--requestor ID]
               passbridge state reset [--state-dir DIR | --store postgresql://…] [--requestor ID]

        The store is the daemon's: --store, else --state-dir, else the default state directory.


        """ + table.usage(defaults: Options(), column: 26)
    }

    /// What `passbridge state` is told besides its action.
    struct Options: Sendable {
        var stateDir: String?
        var store: String?
        var requestor: String?
    }

    /// The actions and options of `passbridge state`, each declared once.
    static let table = OptionTable<Options, UsageError>([
        .init(
            "ACTIONS",
            arguments: [
                ("list", "One line per login: requestor, MVPD, user id, expiry (UTC), device, backend."),
                (
                    "reset",
                    "Deletes the logins (of --requestor ID only, when given), their selected MVPD and cached authorization "
                        + "expiries; DCR registrations and the device identifier stay."
                ),
            ], []),
        .init(
            "OPTIONS",
            [
                .option("--state-dir", "DIR", help: "The daemon's state directory (passbridge --help tells its default).") {
                    options, directory in options.stateDir = directory
                },
                .option("--store", "postgresql://…", help: "The daemon's PostgreSQL store, used instead of the state directory.") {
                    options, uri in options.store = uri
                },
                .option("--requestor", "ID", help: "Only the logins of this requestor.") { options, requestor in
                    options.requestor = requestor
                },
            ]),
    ])

    static let program = CommandLineProgram(name: "passbridge state", version: DaemonOptions.version, usage: usage)

    /// Runs the subcommand; returns the exit code (0, 1 on a store failure, 2 on bad usage).
    static func run(_ arguments: [String]) -> Int32 {
        if let status = program.helpOrVersion(arguments) { return status }
        var options = Options()
        let action: String
        do throws(UsageError) {
            let parsed = try table.parse(arguments, into: &options, positionals: 1)
            guard let first = parsed.positionals.first else { throw UsageError("say list or reset") }
            guard first == "list" || first == "reset" else { throw UsageError("unexpected argument \(first)") }
            action = first
        } catch {
            return program.usageError(error)
        }
        let (stateDir, store, only) = (options.stateDir, options.store, options.requestor)
        do {
            let directory = try StateDirectory.resolve(stateDir)
            if store == nil, !FileManager.default.fileExists(atPath: directory + "/passbridge.sqlite") {
                writeOut(action == "list" ? "no logins (no store in \(directory))\n" : "deleted 0 logins\n")
                return 0
            }
            let opened = try StoreSetup.open(store: store, stateDirectory: directory)
            if action == "reset" {
                let deleted = try StoreSetup.blocking { try await opened.reset(requestor: only) }
                writeOut("deleted \(deleted) login\(deleted == 1 ? "" : "s") from \(opened.location)\n")
            } else {
                let logins = try StoreSetup.blocking { try await opened.logins() }.filter { only == nil || $0.requestor == only }
                writeOut(listing(logins, requestor: only, location: opened.location))
            }
            return 0
        } catch let error as CommandLineError {
            if case .failure(let message) = error { return program.failure(message) }
            return 1
        } catch {
            return program.failure("\(error)")
        }
    }

    /// What `list` prints: the table, or one line saying there are no logins (for `requestor`, when given) in
    /// `location`.
    static func listing(_ logins: [StoredLogin], requestor: String?, location: String) -> String {
        guard logins.isEmpty else { return table(logins) }
        return "no logins\(requestor.map { " for requestor \(printable($0))" } ?? "") in \(location)\n"
    }

    /// Aligned columns with a header; strings are shown JSON-escaped when they hold control characters.
    static func table(_ logins: [StoredLogin]) -> String {
        var rows = [["REQUESTOR", "MVPD", "USER", "EXPIRES", "DEVICE", "BACKEND"]]
        for login in logins {
            let expires = Date(timeIntervalSince1970: Double(login.notAfter) / 1000).formatted(.iso8601)
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
