import Foundation

/// One server's figures.
struct Figures {
    var stdioPingPong = 0.0, stdioPipelined = 0.0, socketPingPong = 0.0, socketPipelined = 0.0
    var spawnMedianMs = 0.0, rssIdleKiB = 0, rss1000KiB = 0
}

func runBenchmark(quick: Bool) {
    var limit = rlimit(rlim_cur: 8192, rlim_max: 8192)
    getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = min(limit.rlim_max, 8192)
    setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    let programs: Programs
    do {
        programs = try Programs.prepare()
    } catch {
        FileHandle.standardError.write(Data("passbridge-bench: \(error)\n".utf8))
        exit(1)
    }
    let pingCalls = quick ? 2000 : 10000
    let pipelinedCalls = quick ? 20000 : 100000
    let rounds = quick ? 1 : 5
    var samples: [ServerKind: [Figures]] = [:]
    var results: [ServerKind: Figures] = [:]
    do {
        // Rounds interleave the servers so machine noise (other load, core placement) hits all alike.
        for round in 1...rounds {
            for kind in ServerKind.allCases {
                var figures = Figures()
                let calls = kind == .python ? pipelinedCalls / 4 : pipelinedCalls
                let stdio = try RunningServer(programs.command(kind, socket: nil), socketPath: nil)
                var client = Client(writeFD: stdio.stdinFD, readFD: stdio.stdoutFD)
                figures.stdioPingPong = client.pingPong(calls: pingCalls)
                figures.stdioPipelined = client.pipelined(calls: calls, depth: 64)
                stdio.stop()

                let path = programs.scratch + "/\(kind == .passbridge ? "pb" : kind == .c ? "c" : "py").sock"
                let server = try RunningServer(programs.command(kind, socket: path), socketPath: path)
                let fd = try connectUnix(path)
                var socketClient = Client(writeFD: fd, readFD: fd)
                figures.socketPingPong = socketClient.pingPong(calls: pingCalls)
                figures.socketPipelined = socketClient.pipelined(calls: calls, depth: 64)
                close(fd)
                server.stop()
                samples[kind, default: []].append(figures)
            }
            FileHandle.standardError.write(Data("round \(round) of \(rounds) done\n".utf8))
        }
        for kind in ServerKind.allCases {
            let runs = samples[kind] ?? []
            func median(_ pick: (Figures) -> Double) -> Double {
                let sorted = runs.map(pick).sorted()
                return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
            }
            var figures = Figures()
            figures.stdioPingPong = median(\.stdioPingPong)
            figures.stdioPipelined = median(\.stdioPipelined)
            figures.socketPingPong = median(\.socketPingPong)
            figures.socketPipelined = median(\.socketPipelined)
            (figures.rssIdleKiB, figures.rss1000KiB) = try residentSizes(kind, programs)
            figures.spawnMedianMs = spawnToFirstResponse(programs.command(kind, socket: nil), runs: quick ? 5 : 21)
            results[kind] = figures
        }
    } catch {
        FileHandle.standardError.write(Data("passbridge-bench: \(error)\n".utf8))
        exit(1)
    }
    try? FileManager.default.removeItem(atPath: programs.scratch)
    printTable(results)
}

/// RSS (KiB) of a socket server after one call, then with 1,000 more connections that each made one call.
func residentSizes(_ kind: ServerKind, _ programs: Programs) throws -> (Int, Int) {
    let path = programs.scratch + "/rss.sock"
    let server = try RunningServer(programs.command(kind, socket: path), socketPath: path)
    defer { server.stop() }
    let first = try connectUnix(path)
    var client = Client(writeFD: first, readFD: first)
    _ = client.pingPong(calls: 1)
    close(first)
    usleep(200_000)
    let idle = server.rssKiB
    var connections: [Int32] = []
    for _ in 0..<1000 {
        let connection = try connectUnix(path)
        var one = Client(writeFD: connection, readFD: connection)
        _ = one.pingPong(calls: 1)
        connections.append(connection)
    }
    usleep(200_000)
    let loaded = server.rssKiB
    for connection in connections { close(connection) }
    return (idle, loaded)
}

/// Median milliseconds from starting the process to reading its first response over stdio.
func spawnToFirstResponse(_ command: [String], runs: Int) -> Double {
    var samples: [Double] = []
    for _ in 0..<runs {
        let start = now()
        guard let server = try? RunningServer(command, socketPath: nil) else { continue }
        var client = Client(writeFD: server.stdinFD, readFD: server.stdoutFD)
        _ = client.pingPong(calls: 1)
        samples.append((now() - start) * 1000)
        server.stop()
    }
    samples.sort()
    return samples.isEmpty ? 0 : samples[samples.count / 2]
}

func printTable(_ results: [ServerKind: Figures]) {
    func cell(_ value: Double, _ unit: String = "") -> String { String(format: "%.1f%@", value, unit) }
    let c = results[.c] ?? Figures()
    var lines = ["| per call (µs) / other | passbridge | C+jansson | Python asyncio | passbridge ÷ C |", "|---|---|---|---|---|"]
    func row(_ name: String, _ pick: (Figures) -> Double) {
        let values = ServerKind.allCases.map { pick(results[$0] ?? Figures()) }
        let ratio = pick(c) > 0 ? values[0] / pick(c) : 0
        lines.append("| \(name) | \(cell(values[0])) | \(cell(values[1])) | \(cell(values[2])) | \(String(format: "%.2f×", ratio)) |")
    }
    row("stdio ping-pong", \.stdioPingPong)
    row("stdio pipelined (64)", \.stdioPipelined)
    row("socket ping-pong", \.socketPingPong)
    row("socket pipelined (64)", \.socketPipelined)
    row("spawn → first response (ms, median)", \.spawnMedianMs)
    row("RSS idle (MiB)", { Double($0.rssIdleKiB) / 1024 })
    row("RSS with 1,000 idle connections (MiB)", { Double($0.rss1000KiB) / 1024 })
    row("RSS per idle connection (KiB)", { Double($0.rss1000KiB - $0.rssIdleKiB) / 1000 })
    print(lines.joined(separator: "\n"))
}
