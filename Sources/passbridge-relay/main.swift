import ArgumentParsing
import Glibc

// passbridge-relay: the shell clients' connection to a daemon's socket (Clients/shell/passbridge-call).

let program = CommandLineProgram(
    name: "passbridge-relay", version: "0.1.0",
    usage: """
        USAGE: passbridge-relay SOCKET

        Connects to the passbridge daemon listening on the Unix socket SOCKET, copies stdin to it and its
        replies to stdout, in either framing. Exit 0 when every request was answered, 1 when the daemon closed
        first, 2 when the socket cannot be reached.

        OPTIONS:
          -h, --help     Show this help.
          --version      Show the version.

        """)
let arguments = Array(CommandLine.arguments.dropFirst())
if let status = program.helpOrVersion(arguments) { exit(status) }
do throws(UsageError) {
    let parsed = try Arguments(arguments, valued: [], flags: [], positionals: 1)
    guard let path = parsed.positionals.first else { throw UsageError("SOCKET is missing") }
    exit(runRelay(path: path))
} catch {
    exit(program.usageError(error))
}
