import ArgumentParsing
import Bridge
import Foundation

// passbridge-test-daemon: `passbridge` serving TestMethods too, for the transport tests; never installed.
// Without --state-dir or --store it keeps its state in a temporary directory, removed at exit.

let program = CommandLineProgram(
    name: "passbridge-test-daemon", version: DaemonOptions.version,
    usage: """
        USAGE: passbridge-test-daemon [passbridge options] [--test-store-look-seconds S] [--test-poll-seconds S]
                                      [--test-logout-page-seconds S]

        passbridge (see passbridge --help) with the test methods of Tests/TestDaemon/TestMethods.swift: the
        JSON-RPC 2.0 specification's examples (subtract, sum, get_data, update, notify_hello, notify_sum),
        echo, test/sleep, test/notify, test/callHost and test/print. For tests only.

        --test-store-look-seconds S   how often the store looks for other processes' login changes when it has
                                      no socket to wait on (passbridge: 0.2; DaemonOptions.storeLookInterval)
        --test-poll-seconds S         how often a second-screen login polls for its code (passbridge: 4;
                                      DaemonOptions.pollInterval)
        --test-logout-page-seconds S  how long a logout waits for its page to come back (passbridge: 10;
                                      DaemonOptions.logoutTimeout)

        """)
var arguments = Array(CommandLine.arguments.dropFirst())
if let status = program.helpOrVersion(arguments) { exit(status) }

/// Takes every `flag S` and `flag=S` out of the arguments (the last one counts): S seconds, from 0.001 to 86,400, to
/// the millisecond (a usage error otherwise, as for anything but a decimal number); nil when the flag is absent.
@MainActor func seconds(of flag: String) -> Duration? {
    var found: Duration?
    while let index = arguments.firstIndex(where: { $0 == flag || $0.hasPrefix(flag + "=") }) {
        let joined = arguments[index] != flag
        let text = joined ? String(arguments[index].dropFirst(flag.count + 1)) : index + 1 < arguments.count ? arguments[index + 1] : ""
        guard let milliseconds = Arguments.milliseconds(text), (1...86_400_000).contains(milliseconds) else {
            exit(program.usageError(UsageError("\(flag) needs a number of seconds from 0.001 to 86400, got '\(text)'")))
        }
        arguments.removeSubrange(index...(joined ? index : index + 1))
        found = .milliseconds(milliseconds)
    }
    return found
}
let lookInterval = seconds(of: "--test-store-look-seconds")
let pollInterval = seconds(of: "--test-poll-seconds")
let logoutTimeout = seconds(of: "--test-logout-page-seconds")
var options: DaemonOptions
do throws(CommandLineError) {
    options = try DaemonOptions.parse(arguments)
} catch {
    switch error {
    case .usage(let message): exit(program.usageError(UsageError(message)))
    case .failure(let message): exit(program.failure(message))
    }
}
if let lookInterval { options.storeLookInterval = lookInterval }
options.pollInterval = pollInterval
options.logoutTimeout = logoutTimeout
var temporary: URL?
if options.stateDir == nil && options.store == nil {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("passbridge-test-daemon-\(UUID().uuidString)")
    temporary = directory
    options.stateDir = directory.path
}
let status = Daemon.run(options) { TestMethodsHandler(next: $0) }
if let temporary { try? FileManager.default.removeItem(at: temporary) }
exit(status)
