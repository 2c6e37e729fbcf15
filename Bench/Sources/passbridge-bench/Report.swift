import Foundation

/// The figures as Markdown tables: every figure per server, then each goal of the daemon with its ratio.
func report(_ servers: [Server], _ results: [Figures]) -> String {
    let c = servers.firstIndex { $0.name == "C+jansson" } ?? 0
    let header = "| | " + servers.map(\.name).joined(separator: " | ") + " | passbridge ÷ C |"
    let rule = "|---|" + String(repeating: "---|", count: servers.count + 1)
    func cell(_ value: Double?) -> String { value.map { String(format: "%.2f", $0) } ?? "—" }
    func row(_ name: String, _ pick: (Figures) -> Double?) -> String {
        let values = results.map(pick)
        let ratio = values[c].flatMap { floor in values[0].map { String(format: "%.2f×", $0 / floor) } } ?? "—"
        return "| \(name) | " + values.map(cell).joined(separator: " | ") + " | \(ratio) |"
    }
    func mib(_ figure: Figure) -> (Figures) -> Double? { { $0[figure].map { $0 / 1024 } } }
    var lines = ["C client (µs per call unless stated):", "", header, rule]
    lines.append(row("stdio ping-pong", { $0[.stdioPingPong(c: true)] }))
    lines.append(row("stdio pipelined (64)", { $0[.stdioPipelined(c: true)] }))
    lines.append(row("socket ping-pong", { $0[.socketPingPong(c: true)] }))
    lines.append(row("socket pipelined (64)", { $0[.socketPipelined(c: true)] }))
    lines.append(row("spawn → first response (ms, median)", { $0[.spawnMs] }))
    lines.append(row("RSS idle after one call (MiB)", mib(.rssIdleKiB)))
    lines.append(row("RSS with 1,000 idle connections (MiB)", mib(.rss1000KiB)))
    lines.append(
        row("RSS per idle connection (KiB)", { f in f[.rss1000KiB].flatMap { loaded in f[.rssIdleKiB].map { (loaded - $0) / 1000 } } }))
    lines.append(row("binary (MB)", { $0[.binaryBytes].map { $0 / 1_000_000 } }))
    lines += ["", "This bench's Swift client (µs per call):", "", header, rule]
    lines.append(row("stdio ping-pong", { $0[.stdioPingPong(c: false)] }))
    lines.append(row("stdio pipelined (64)", { $0[.stdioPipelined(c: false)] }))
    lines.append(row("socket ping-pong", { $0[.socketPingPong(c: false)] }))
    lines.append(row("socket pipelined (64)", { $0[.socketPipelined(c: false)] }))

    let daemons = servers.indices.filter { servers[$0].passbridge != nil }
    lines += [
        "", "Goals (C client):", "", "| figure | " + daemons.map { servers[$0].name }.joined(separator: " | ") + " | goal |",
        "|---|" + String(repeating: "---|", count: daemons.count + 1),
    ]
    func goal(_ name: String, _ limit: Double, _ unit: String, _ value: (Figures) -> Double?) {
        let cells = daemons.map { index -> String in
            guard let measured = value(results[index]) else { return "—" }
            return String(format: "%.2f%@ %@", measured, unit, measured <= limit ? "(met)" : "(**missed**)")
        }
        lines.append("| \(name) | " + cells.joined(separator: " | ") + String(format: " | ≤ %.1f%@ |", limit, unit))
    }
    func ratio(_ figure: Figure) -> (Figures) -> Double? {
        { f in f[figure].flatMap { value in results[c][figure].map { value / $0 } } }
    }
    goal("stdio pipelined ÷ C", 1.0, "×", ratio(.stdioPipelined(c: true)))
    goal("socket pipelined ÷ C", 1.0, "×", ratio(.socketPipelined(c: true)))
    goal("stdio ping-pong ÷ C", 1.0, "×", ratio(.stdioPingPong(c: true)))
    goal("socket ping-pong ÷ C", 1.0, "×", ratio(.socketPingPong(c: true)))
    goal("spawn → first response ÷ C", 3, "×", ratio(.spawnMs))
    goal("RSS idle after one call", 10, " MiB", mib(.rssIdleKiB))
    goal("binary (static, stripped)", 12, " MB", { $0[.binaryBytes].map { $0 / 1_000_000 } })
    return lines.joined(separator: "\n")
}

/// The `--footprint` table: medians over the rounds; "saved" compares each passbridge row with the row after it
/// (the `--step` binaries stand between the measured passbridge and `--before`).
func footprintReport(_ servers: [Server], spawns: [[Double]], sizes: [[Double]]) -> String {
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    let rounds = sizes.first?.count ?? 0
    var lines = [
        "Footprint, median of \(rounds) rounds (spawn → first response: C client, median of 21 spawns per round):", "",
        "| server | spawn → first response (ms) | RSS idle after one call (MiB) | RSS range (MiB) | RSS saved by this step (MiB) |",
        "|---|---|---|---|---|",
    ]
    for index in servers.indices {
        let rss = median(sizes[index])
        var saved = "—"
        if servers[index].passbridge != nil, index + 1 < servers.count, servers[index + 1].passbridge != nil {
            saved = String(format: "%.2f", median(sizes[index + 1]) - rss)
        }
        lines.append(
            String(
                format: "| %@ | %.2f | %.2f | %.2f–%.2f | %@ |", servers[index].name, median(spawns[index]), rss, sizes[index].min() ?? 0,
                sizes[index].max() ?? 0, saved))
    }
    return lines.joined(separator: "\n")
}
