import ArgumentParsing
import Bridge
import Glibc

// passbridge: the daemon (Daemon.run in Bridge) and its `state` subcommand.

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "state" {
    exit(StateCommand.run(Array(arguments.dropFirst())))
}
let program = CommandLineProgram(name: "passbridge", version: DaemonOptions.version, usage: DaemonOptions.usage)
if let status = program.helpOrVersion(arguments) { exit(status) }
do throws(CommandLineError) {
    exit(Daemon.run(try DaemonOptions.parse(arguments)))
} catch {
    switch error {
    case .usage(let message): exit(program.usageError(UsageError(message)))
    case .failure(let message): exit(program.failure(message))
    }
}
