import Glibc
import JSONRPC

// passbridge: command line, signals and transports (DESIGN §3 "Command line").

if CommandLine.arguments.dropFirst().first == "state" {
    exit(StateCommand.run(Array(CommandLine.arguments.dropFirst(2))))
}

let options: DaemonOptions
do {
    options = try DaemonOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    switch error {
    case .help:
        writeOut(DaemonOptions.usage)
        exit(0)
    case .version:
        writeOut("passbridge \(DaemonOptions.version)\n")
        exit(0)
    case .usage(let message):
        writeError("passbridge: \(message) (see passbridge --help)")
        exit(2)
    case .failure(let message):
        writeError("passbridge: \(message)")
        exit(1)
    }
}

Logger.level = options.logLevel
if let relayPath = options.relayPath {
    exit(runRelay(path: relayPath))
}
exit(serve(options))
