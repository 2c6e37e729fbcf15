import Foundation

/// One server's figures by name (see `Figure`); a round fills the transport ones, the rest are measured once.
typealias Figures = [Figure: Double]

enum Figure: Hashable {
    /// Microseconds per call through the C client (`c == true`) or this bench's Swift client.
    case stdioPingPong(c: Bool), stdioPipelined(c: Bool), socketPingPong(c: Bool), socketPipelined(c: Bool)
    case spawnMs, rssIdleKiB, rss1000KiB
    /// The binary's size in bytes (passbridge columns).
    case binaryBytes
}

struct Options {
    var quick = false
    var passbridge: String?
    var before: String?
    var footprint = false
    var steps: [(String, String)] = []
    /// Also count instructions per call under callgrind (`cpu-bench.py --instructions`).
    var instructions = false
}

func runBenchmark(_ options: Options) throws {
    var limit = rlimit(rlim_cur: 8192, rlim_max: 8192)
    getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = min(limit.rlim_max, 8192)
    setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    let programs = try Programs.prepare(passbridge: options.passbridge, before: options.before)
    defer { try? FileManager.default.removeItem(atPath: programs.scratch) }
    // The headline first: CPU per operation, beside curl's (Bench/README.md, "Why CPU").
    let cpu = try cpuTable(programs, options)
    let pingCalls = options.quick ? 2000 : 10000
    let pipelinedCalls = options.quick ? 20000 : 100000
    let rounds = options.quick ? 1 : 5
    var samples = Array(repeating: [Figures](), count: programs.servers.count)
    // Rounds interleave the servers so machine noise (other load, core placement) hits all alike.
    for round in 1...rounds {
        for (index, server) in programs.servers.enumerated() {
            let calls = server.name.hasPrefix("Python") ? pipelinedCalls / 4 : pipelinedCalls
            var figures = try transportFigures(server, programs, ping: pingCalls, pipelined: calls, cClient: true)
            figures.merge(try transportFigures(server, programs, ping: pingCalls, pipelined: calls, cClient: false)) { $1 }
            samples[index].append(figures)
        }
        FileHandle.standardError.write(Data("round \(round) of \(rounds) done\n".utf8))
    }
    var results: [Figures] = []
    for (index, server) in programs.servers.enumerated() {
        var figures: Figures = [:]
        for figure in samples[index].first?.keys ?? [:].keys {
            let sorted = samples[index].compactMap { $0[figure] }.sorted()
            figures[figure] = sorted[sorted.count / 2]
        }
        let spawn = try printedFigures(of: [programs.cClient, "spawn", options.quick ? "5" : "21", "--"] + server.command(nil))
        figures[.spawnMs] = spawn["spawn_ms"]
        let (idle, loaded) = try residentSizes(server, programs)
        figures[.rssIdleKiB] = Double(idle)
        figures[.rss1000KiB] = Double(loaded)
        if let binary = server.passbridge {
            figures[.binaryBytes] = (try? FileManager.default.attributesOfItem(atPath: binary)[.size] as? Int).map(Double.init)
        }
        results.append(figures)
        FileHandle.standardError.write(Data("\(server.name): spawn and RSS done\n".utf8))
    }
    print("CPU per operation (cpu-bench.py):\n\n" + cpu + "\n\n" + report(programs.servers, results))
}

/// Ping-pong and pipelined (64 in flight) over stdio, then over a Unix socket, through one client.
func transportFigures(_ server: Server, _ programs: Programs, ping: Int, pipelined: Int, cClient: Bool) throws -> Figures {
    var figures: Figures = [:]
    let path = programs.scratch + "/bench.sock"
    if cClient {
        let stdio = try printedFigures(of: [programs.cClient, "stdio", "\(ping)", "\(pipelined)", "--"] + server.command(nil))
        let listening = try RunningServer(server.command(path), socketPath: path)
        defer { listening.stop() }
        let socket = try printedFigures(of: [programs.cClient, "socket", "\(ping)", "\(pipelined)", path])
        figures[.stdioPingPong(c: true)] = stdio["pingpong_us"]
        figures[.stdioPipelined(c: true)] = stdio["pipelined_us"]
        figures[.socketPingPong(c: true)] = socket["pingpong_us"]
        figures[.socketPipelined(c: true)] = socket["pipelined_us"]
        return figures
    }
    let stdio = try RunningServer(server.command(nil), socketPath: nil)
    var client = Client(writeFD: stdio.stdinFD, readFD: stdio.stdoutFD)
    figures[.stdioPingPong(c: false)] = client.pingPong(calls: ping)
    figures[.stdioPipelined(c: false)] = client.pipelined(calls: pipelined, depth: 64)
    stdio.stop()
    let listening = try RunningServer(server.command(path), socketPath: path)
    defer { listening.stop() }
    let fd = try connectUnix(path)
    defer { close(fd) }
    var socketClient = Client(writeFD: fd, readFD: fd)
    figures[.socketPingPong(c: false)] = socketClient.pingPong(calls: ping)
    figures[.socketPipelined(c: false)] = socketClient.pipelined(calls: pipelined, depth: 64)
    return figures
}

/// RSS (KiB) of a socket server after one call, then with 1,000 more connections that each made one call.
func residentSizes(_ server: Server, _ programs: Programs) throws -> (Int, Int) {
    let path = programs.scratch + "/rss.sock"
    let running = try RunningServer(server.command(path), socketPath: path)
    defer { running.stop() }
    let idle = try idleResidentSize(running, path)
    var connections: [Int32] = []
    for _ in 0..<1000 {
        let connection = try connectUnix(path)
        var one = Client(writeFD: connection, readFD: connection)
        _ = one.pingPong(calls: 1)
        connections.append(connection)
    }
    usleep(200_000)
    let loaded = running.rssKiB
    for connection in connections { close(connection) }
    return (idle, loaded)
}

/// RSS (KiB) of a running socket server after one connection made one call and closed.
func idleResidentSize(_ running: RunningServer, _ path: String) throws -> Int {
    let first = try connectUnix(path)
    var client = Client(writeFD: first, readFD: first)
    _ = client.pingPong(calls: 1)
    close(first)
    usleep(200_000)
    return running.rssKiB
}

/// `--footprint`: spawn → first response (C client, median of 21) and idle RSS (a fresh socket server, one call)
/// of every server, `rounds` times interleaved; prints the medians, each passbridge row beside the one before it,
/// so that the steps given with `--step` show what each saved.
func runFootprint(_ options: Options) throws {
    let programs = try Programs.prepare(passbridge: options.passbridge, before: options.before, steps: options.steps)
    defer { try? FileManager.default.removeItem(atPath: programs.scratch) }
    let servers = programs.servers.filter { !$0.name.hasPrefix("Python") }
    let rounds = options.quick ? 1 : 7
    var spawns = Array(repeating: [Double](), count: servers.count)
    var sizes = Array(repeating: [Double](), count: servers.count)
    let path = programs.scratch + "/rss.sock"
    for round in 1...rounds {
        for (index, server) in servers.enumerated() {
            let spawn = try printedFigures(of: [programs.cClient, "spawn", "21", "--"] + server.command(nil))
            spawns[index].append(spawn["spawn_ms"] ?? .nan)
            let running = try RunningServer(server.command(path), socketPath: path)
            sizes[index].append(Double(try idleResidentSize(running, path)) / 1024)
            running.stop()
        }
        FileHandle.standardError.write(Data("round \(round) of \(rounds) done\n".utf8))
    }
    print(footprintReport(servers, spawns: spawns, sizes: sizes))
}

/// `cpu-bench.py` for the measured passbridge (and `--before`), against the pass-emulator built next to this bench:
/// its Markdown tables.
func cpuTable(_ programs: Programs, _ options: Options) throws -> String {
    let emulator = programs.binDir + "/pass-emulator"
    guard FileManager.default.isExecutableFile(atPath: emulator) else {
        throw BenchError("\(emulator) is missing: run `swift build -c release --product pass-emulator` first")
    }
    let daemons = programs.servers.compactMap(\.passbridge)
    var command = [
        "python3", programs.benchDir + "/cpu-bench.py", "--bin-dir", programs.binDir, "--passbridge", daemons[0],
        "--calls", options.quick ? "200" : "1000", "--flows", options.quick ? "10" : "40", "--rounds", options.quick ? "1" : "3",
    ]
    if let before = options.before { command += ["--before", before] }
    if options.instructions { command.append("--instructions") }
    return try output(of: command).trimmingCharacters(in: .whitespacesAndNewlines)
}
