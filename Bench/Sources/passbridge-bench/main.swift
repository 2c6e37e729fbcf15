import CShims
import Foundation

// passbridge-bench: passbridge vs a C+jansson NDJSON server vs a Python asyncio server, one client,
// one run. See Bench/README.md. Usage: passbridge-bench [--quick] [--pin]
//   --quick  fewer calls and one round (a smoke test)
//   --pin    run the client and every server on CPU 0 (measures CPU cost without cross-core wake-ups)

let arguments = CommandLine.arguments
if arguments.contains("--pin") && cshims_pin_to_cpu(0) != 0 {
    FileHandle.standardError.write(Data("passbridge-bench: cannot pin to CPU 0\n".utf8))
}
runBenchmark(quick: arguments.contains("--quick"))
