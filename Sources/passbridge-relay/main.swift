import ArgumentParsing
import Glibc

// passbridge-relay: the shell clients' connection to a daemon's socket (Clients/shell/passbridge-call).

// No options of its own: the table only shows SOCKET, -h/--help and --version, and refuses anything else.
let options = OptionTable<Void, UsageError>([
    .init("ARGUMENTS", arguments: [("SOCKET", "The daemon's Unix socket (passbridge --socket PATH).")], []), .init("OPTIONS", []),
])
let program = CommandLineProgram(
    name: "passbridge-relay", version: PackageVersion.string,
    usage: """
        USAGE: passbridge-relay SOCKET

        Connects to the passbridge daemon listening on the Unix socket SOCKET, copies stdin to it and its
        replies to stdout, in either framing. Exit 0 when every request was answered, 1 when the daemon closed
        first, 2 when the socket cannot be reached, 3 when nothing listens on it (connection refused: a socket a
        killed daemon left behind).


        """ + options.usage(defaults: (), column: 15))
let arguments = Array(CommandLine.arguments.dropFirst())
if let status = program.helpOrVersion(arguments) { exit(status) }
do throws(UsageError) {
    var nothing: Void = ()
    let parsed = try options.parse(arguments, into: &nothing, positionals: 1)
    guard let path = parsed.positionals.first else { throw UsageError("SOCKET is missing") }
    exit(runRelay(path: path))
} catch {
    exit(program.usageError(error))
}
