import Foundation

// passbridge-bench: passbridge vs a C+jansson NDJSON server vs a Python asyncio server, one client,
// one run. See Bench/README.md. Usage: passbridge-bench [--quick]

let quick = CommandLine.arguments.contains("--quick")
runBenchmark(quick: quick)
