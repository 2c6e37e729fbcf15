/// A connection's unsent output: framed messages in order, small ones packed into chunks of up to 64 KiB,
/// a larger one in a chunk of its own.
///
/// Chunks, rather than one growing buffer, keep the memory of a queue close to the bytes it holds: a queue
/// that grows to the high-water mark never reallocates and copies itself, and written chunks are freed.
struct OutboundQueue {
    /// Size up to which messages share a chunk.
    static let chunkBytes = 65536

    private var chunks: [[UInt8]] = []
    /// Index of the first chunk not fully written, and how much of it was written.
    private var head = 0
    private var offset = 0
    /// Unsent bytes.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// Appends `body` framed with `framing`.
    mutating func append(_ body: [UInt8], framing: Framing) {
        if framing == .contentLength { pack(Array("Content-Length: \(body.count)\r\n\r\n".utf8)) }
        pack(body)
        if framing != .contentLength { pack([UInt8(ascii: "\n")]) }
    }

    /// Appends one message, a JSON array whose `[` and elements are the unsent bytes of `elements` (a batch's
    /// answers, packed as they came); its chunks are moved, not copied.
    mutating func append(array elements: OutboundQueue, framing: Framing) {
        var body = elements
        body.pack([UInt8(ascii: "]")])
        if framing == .contentLength { pack(Array("Content-Length: \(body.count)\r\n\r\n".utf8)) }
        chunks += body.chunks[body.head...]
        count += body.count
        if framing != .contentLength { pack([UInt8(ascii: "\n")]) }
    }

    /// Copies `bytes` into the last chunk if they fit, else into a new chunk.
    mutating func pack(_ bytes: [UInt8]) {
        let last = chunks.count - 1
        if last >= head, chunks[last].count + bytes.count <= OutboundQueue.chunkBytes {
            chunks[last] += bytes
        } else {
            var chunk: [UInt8] = []
            chunk.reserveCapacity(max(4096, bytes.count + 64))  // room for a newline or a batch comma
            chunk += bytes
            chunks.append(chunk)
        }
        count += bytes.count
    }

    /// Calls `write` with the first unsent bytes (one chunk); `write` returns how many it wrote, or a
    /// value ≤ 0 to stop. Returns what `write` returned.
    mutating func writeFirst(_ write: (UnsafeRawBufferPointer) -> Int) -> Int {
        guard count > 0 else { return 0 }
        let written = chunks[head].withUnsafeBytes { write(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
        guard written > 0 else { return written }
        offset += written
        count -= written
        if offset == chunks[head].count {
            chunks[head] = []
            head += 1
            offset = 0
            if head == chunks.count || head >= 64 {
                chunks.removeFirst(head)
                head = 0
            }
        }
        return written
    }

    /// Forgets everything unsent.
    mutating func removeAll() {
        self = OutboundQueue()
    }
}
