import ArgumentParsing
import Bridge
import CShims
import Glibc

// passbridge: the daemon (Daemon.run in Bridge) and its `state` and `stats` subcommands.

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "state" {
    exit(StateCommand.run(Array(arguments.dropFirst())))
}
if arguments.first == "stats" {
    exit(StatsCommand.run(Array(arguments.dropFirst())))
}
let program = CommandLineProgram(name: "passbridge", version: DaemonOptions.version, usage: DaemonOptions.usage)
if let status = program.helpOrVersion(arguments) { exit(status) }
// At most two malloc arenas (glibc's default allows eight per core): under steady load the daemon's RSS then stays
// flat instead of stepping up by megabytes as its threads spread allocations over new arenas. MALLOC_ARENA_MAX in
// the environment still decides.
if getenv("MALLOC_ARENA_MAX") == nil { _ = mallopt(M_ARENA_MAX, 2) }
// A descriptor per connected host, and the store's and the backend's: a soft limit of 1024 (systemd's default)
// would refuse the thousandth host.
CommandLineProgram.raiseOpenFileLimit()
do throws(CommandLineError) {
    exit(Daemon.run(try DaemonOptions.parse(arguments)))
} catch {
    switch error {
    case .usage(let message): exit(program.usageError(UsageError(message)))
    case .failure(let message): exit(program.failure(message))
    }
}
