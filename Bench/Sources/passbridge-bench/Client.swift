import Glibc

/// The one client used against every server: raw writes of NDJSON requests for an unknown method,
/// and reads that count response lines (no parsing, so the client costs the same for every server).
struct Client {
    let writeFD: Int32
    let readFD: Int32
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)

    init(writeFD: Int32, readFD: Int32) {
        self.writeFD = writeFD
        self.readFD = readFD
    }

    static func request(_ id: Int) -> [UInt8] {
        Array(#"{"jsonrpc":"2.0","method":"bench/unknown","params":{"n":1},"id":\#(id)}"#.utf8) + [10]
    }

    private func send(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(writeFD, raw.baseAddress! + offset, raw.count - offset)
                precondition(written > 0, "write failed: \(String(cString: strerror(errno)))")
                offset += written
            }
        }
    }

    /// Reads until at least one more response line arrived; returns how many lines were completed.
    private mutating func receive() -> Int {
        let count = buffer.withUnsafeMutableBytes { read(readFD, $0.baseAddress, $0.count) }
        precondition(count > 0, "server closed or failed")
        var lines = 0
        for index in 0..<count where buffer[index] == 10 { lines += 1 }
        return lines
    }

    /// Microseconds per call with one request in flight.
    mutating func pingPong(calls: Int) -> Double {
        for id in 0..<min(1000, calls) { roundTrip(id) }
        let start = now()
        for id in 0..<calls { roundTrip(id) }
        return (now() - start) / Double(calls) * 1e6
    }

    private mutating func roundTrip(_ id: Int) {
        send(Client.request(id))
        var received = 0
        while received < 1 { received += receive() }
    }

    /// Microseconds per call with `depth` requests in flight.
    mutating func pipelined(calls: Int, depth: Int) -> Double {
        _ = runPipelined(calls: min(2000, calls), depth: depth)
        let start = now()
        runPipelined(calls: calls, depth: depth)
        return (now() - start) / Double(calls) * 1e6
    }

    @discardableResult
    private mutating func runPipelined(calls: Int, depth: Int) -> Int {
        var sent = 0
        var received = 0
        var batch: [UInt8] = []
        while sent < min(depth, calls) {
            batch += Client.request(sent)
            sent += 1
        }
        send(batch)
        while received < calls {
            let got = receive()
            received += got
            batch.removeAll(keepingCapacity: true)
            var more = 0
            while more < got && sent < calls {
                batch += Client.request(sent)
                sent += 1
                more += 1
            }
            if !batch.isEmpty { send(batch) }
        }
        return received
    }
}

/// Seconds on the monotonic clock.
func now() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}
