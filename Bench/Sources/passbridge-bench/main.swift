import CShims
import Foundation

// passbridge-bench: first the CPU per operation (cpu-bench.py: the daemon's CPU per call beside curl's), then
// passbridge vs a C+jansson NDJSON server vs a Python asyncio server, through a C client and this bench's Swift
// client, one run; then spawn, RSS and the binary's size, and each goal. See Bench/README.md.
// Usage: passbridge-bench [--quick] [--pin] [--instructions] [--passbridge PATH] [--before PATH]
//                         [--footprint [--step NAME=PATH]...]
//   --quick            fewer calls and one round (a smoke test)
//   --pin              run the clients and every server on CPU 0 (CPU cost without cross-core wake-ups)
//   --instructions     also count the daemon's instructions per call under callgrind (slow)
//   --passbridge PATH  measure this daemon instead of the one built next to the bench
//   --before PATH      also measure this daemon, in a column of its own (an older build, for before/after)
//   --footprint        only spawn → first response and idle RSS, 7 interleaved rounds (one with --quick)
//   --step NAME=PATH   with --footprint: one more daemon between --passbridge and --before (an intermediate build)

var options = Options()
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--quick": options.quick = true
    case "--pin":
        if cshims_pin_to_cpu(0) != 0 { FileHandle.standardError.write(Data("passbridge-bench: cannot pin to CPU 0\n".utf8)) }
    case "--passbridge": options.passbridge = arguments.popFirst()
    case "--before": options.before = arguments.popFirst()
    case "--footprint": options.footprint = true
    case "--instructions": options.instructions = true
    case "--step":
        guard let step = arguments.popFirst(), let equals = step.firstIndex(of: "=") else {
            FileHandle.standardError.write(Data("passbridge-bench: --step needs NAME=PATH\n".utf8))
            exit(2)
        }
        options.steps.append((String(step[..<equals]), String(step[step.index(after: equals)...])))
    default:
        FileHandle.standardError.write(Data("passbridge-bench: unknown option \(argument)\n".utf8))
        exit(2)
    }
}
do {
    try options.footprint ? runFootprint(options) : runBenchmark(options)
} catch {
    FileHandle.standardError.write(Data("passbridge-bench: \(error)\n".utf8))
    exit(1)
}
