import Glibc

/// How messages are delimited on a connection (the JSON-RPC 2.0 Specification leaves it to the transport;
/// Content-Length framing is that of the Language Server Protocol's "Base Protocol").
public enum Framing: UInt8, Sendable {
    /// Not known yet: nothing but whitespace has arrived. Output uses NDJSON meanwhile.
    case undetermined
    /// One compact JSON text per line, `\n`-terminated (a trailing `\r` is tolerated on input).
    case ndjson
    /// LSP base protocol: `Content-Length: N\r\n\r\n` then N bytes of UTF-8 (other headers ignored).
    case contentLength

    /// Appends `body` with this framing's delimiters to `output`.
    public func append(_ body: [UInt8], to output: inout [UInt8]) {
        if self == .contentLength {
            output += "Content-Length: \(body.count)\r\n\r\n".utf8
            output += body
        } else {
            output += body
            output.append(UInt8(ascii: "\n"))
        }
    }

    /// `body` with this framing's delimiters (NDJSON when undetermined).
    public func frame(_ body: [UInt8]) -> [UInt8] {
        switch self {
        case .contentLength:
            var bytes = Array("Content-Length: \(body.count)\r\n\r\n".utf8)
            bytes += body
            return bytes
        case .ndjson, .undetermined:
            var bytes = body
            bytes.append(UInt8(ascii: "\n"))
            return bytes
        }
    }
}

/// What a ``Framer`` found in the bytes fed to it.
public enum FrameEvent {
    /// One whole message body; the buffer is valid only during the callback.
    case message(UnsafeRawBufferPointer)
    /// A message over the size limit was refused (and is being skipped); the connection goes on.
    /// `declaredBytes` is the Content-Length when the peer announced one.
    case tooLarge(declaredBytes: Int?)
    /// A header block that cannot be read (Content-Length framing): the framer skips to the next
    /// `Content-Length:` and goes on. Reported once per resynchronization.
    case unreadable(String)
    /// Input ended inside a Content-Length header block or body (the reason says where); nothing follows.
    case cutShort(String)
}

/// A pure state machine that splits a byte stream into messages (swift-nio style: fed bytes,
/// yields whole messages or waits for more).
///
/// The framing is detected from the first non-whitespace byte: `C`/`c` starts Content-Length
/// headers, anything else is NDJSON. The size limit is enforced before any buffer grows past it:
/// an over-long NDJSON line is dropped up to its `\n`; an over-limit Content-Length body is skipped up to the
/// next `Content-Length:` without being stored (not by its declared length, which a peer may set to 2⁶³). A header block that cannot be read (a line that is not a header,
/// no valid Content-Length, headers beyond 8 KiB) is reported once, then bytes are skipped up to the next
/// `Content-Length:` (any case, anywhere). Bytes before a `Content-Length:` on the first line of a block are
/// dropped silently: they are the tail of a body whose length was declared too short, and that body has
/// already failed to parse. The rule is written down in Protocol/README.md.
public struct Framer {
    /// Largest accepted message body, in bytes.
    public let maxMessageBytes: Int
    /// Largest accepted header block (Content-Length framing), in bytes.
    public static let maxHeaderBytes = 8192

    public private(set) var framing: Framing = .undetermined

    private enum State {
        case detecting
        case line(discarding: Bool)
        case headers(length: Int?, bytes: Int)
        case body(remaining: Int)
        /// Looking for `content-length:`; `matched` is how many of its bytes the last bytes seen match.
        case seeking(matched: Int)
        case dead
    }

    /// What a header block is resynchronized on, lowercased.
    private static let lengthHeader = Array("content-length:".utf8)

    private var state: State = .detecting
    /// The partial line (NDJSON or a header line) or partial body received so far.
    private var pending: [UInt8] = []

    public init(maxMessageBytes: Int) {
        self.maxMessageBytes = maxMessageBytes
    }

    /// Bytes held for a message not yet complete.
    public var bufferedBytes: Int { pending.count }

    /// Consumes `chunk`, calling `body` for each event in stream order. Before each step `pause` is asked
    /// whether to stop (the reader's back-pressure); returns how many bytes were consumed, all of `chunk`
    /// unless paused. The caller feeds the rest later, unchanged.
    @discardableResult
    public mutating func feed(_ chunk: UnsafeRawBufferPointer, pausing pause: () -> Bool = { false }, _ body: (FrameEvent) -> Void) -> Int {
        guard let base = chunk.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return 0 }
        let end = chunk.count
        var index = 0
        while index < end {
            if pause() { return index }
            switch state {
            case .dead:
                return end
            case .detecting:
                let byte = base[index]
                if Framer.isWhitespace(byte) {
                    index += 1
                } else if Framer.framing(startingWith: byte) == .contentLength {
                    framing = .contentLength
                    state = .headers(length: nil, bytes: 0)
                } else {
                    framing = .ndjson
                    state = .line(discarding: false)
                }
            case .line(let discarding):
                let newline = memchr(base + index, Int32(UInt8(ascii: "\n")), end - index)
                guard let newline else {
                    if !discarding {
                        if pending.count + (end - index) > maxMessageBytes + 1 {
                            pending = []
                            state = .line(discarding: true)
                            body(.tooLarge(declaredBytes: nil))
                        } else {
                            pending.append(contentsOf: UnsafeBufferPointer(start: base + index, count: end - index))
                        }
                    }
                    return end
                }
                let lineEnd = UnsafeRawPointer(newline) - UnsafeRawPointer(base)
                if discarding {
                    state = .line(discarding: false)
                } else if pending.isEmpty {
                    emitLine(UnsafeBufferPointer(start: base + index, count: lineEnd - index), body)
                } else {
                    let total = pending.count + lineEnd - index
                    if total > maxMessageBytes + 1 {
                        pending = []
                        body(.tooLarge(declaredBytes: nil))
                    } else {
                        pending.append(contentsOf: UnsafeBufferPointer(start: base + index, count: lineEnd - index))
                        let line = pending
                        pending = []
                        line.withUnsafeBufferPointer { emitLine($0, body) }
                    }
                }
                index = lineEnd + 1
            case .headers(let length, let bytes):
                let newline = memchr(base + index, Int32(UInt8(ascii: "\n")), end - index)
                let lineEnd = newline.map { UnsafeRawPointer($0) - UnsafeRawPointer(base) } ?? end
                let taken = lineEnd - index
                if bytes + pending.count + taken > Framer.maxHeaderBytes {
                    fail("header block over \(Framer.maxHeaderBytes) bytes", body)
                    continue
                }
                pending.append(contentsOf: UnsafeBufferPointer(start: base + index, count: taken))
                guard newline != nil else { return end }
                index = lineEnd + 1
                let line = pending
                pending = []
                headerLine(line, length: length, bytes: bytes + line.count + 1, body)
            case .body(let remaining):
                let take = min(remaining, end - index)
                if pending.isEmpty && take == remaining {
                    body(.message(UnsafeRawBufferPointer(start: base + index, count: take)))
                } else {
                    pending.append(contentsOf: UnsafeBufferPointer(start: base + index, count: take))
                    if take == remaining {
                        let message = pending
                        pending = []
                        message.withUnsafeBytes { body(.message($0)) }
                    }
                }
                index += take
                state = take == remaining ? .headers(length: nil, bytes: 0) : .body(remaining: remaining - take)
            case .seeking(var matched):
                while index < end && matched < Framer.lengthHeader.count {
                    let byte = Framer.lowercased(base[index])
                    // No proper prefix of "content-length:" recurs in it, so a mismatch restarts at 0 (or 1 on `c`).
                    if byte == Framer.lengthHeader[matched] { matched += 1 } else { matched = byte == Framer.lengthHeader[0] ? 1 : 0 }
                    index += 1
                }
                if matched == Framer.lengthHeader.count {
                    pending = Array("Content-Length:".utf8)
                    state = .headers(length: nil, bytes: 0)
                } else {
                    state = .seeking(matched: matched)
                }
            }
        }
        return end
    }

    /// The peer's input ended: an unterminated NDJSON line still held is its last message; a Content-Length header
    /// block or body cut short is reported (``FrameEvent/cutShort(_:)``), since its end was never announced.
    public mutating func finish(_ body: (FrameEvent) -> Void) {
        defer {
            pending = []
            state = .dead
        }
        switch state {
        case .line(discarding: false) where !pending.isEmpty:
            let line = pending
            line.withUnsafeBufferPointer { emitLine($0, body) }
        case .headers(let length, let bytes) where length != nil || bytes > 2 || pending.contains { !Framer.isWhitespace($0) }:
            body(.cutShort("input ended inside a header block"))
        case .body(let remaining):
            body(.cutShort("input ended after \(pending.count) of the body's \(pending.count + remaining) bytes"))
        default:
            break
        }
    }

    private mutating func emitLine(_ line: UnsafeBufferPointer<UInt8>, _ body: (FrameEvent) -> Void) {
        var count = line.count
        if count > 0 && line[count - 1] == UInt8(ascii: "\r") { count -= 1 }
        if count > maxMessageBytes {
            body(.tooLarge(declaredBytes: nil))
            return
        }
        var blank = true
        for offset in 0..<count where !Framer.isWhitespace(line[offset]) {
            blank = false
            break
        }
        if blank { return }
        body(.message(UnsafeRawBufferPointer(start: line.baseAddress, count: count)))
    }

    private mutating func headerLine(_ raw: [UInt8], length: Int?, bytes: Int, _ body: (FrameEvent) -> Void) {
        var line = raw
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        if bytes == raw.count + 1, let start = Framer.lengthHeaderOffset(in: line), start > 0 {
            line.removeFirst(start)
        }
        if line.isEmpty {
            if bytes <= 2 && length == nil {
                // A stray line break between messages.
                state = .headers(length: nil, bytes: 0)
                return
            }
            guard let length else {
                fail("header block without Content-Length", body)
                return
            }
            if length > maxMessageBytes {
                state = .seeking(matched: 0)
                body(.tooLarge(declaredBytes: length))
            } else if length == 0 {
                state = .headers(length: nil, bytes: 0)
                body(.message(UnsafeRawBufferPointer(start: nil, count: 0)))
            } else {
                pending.reserveCapacity(length)
                state = .body(remaining: length)
            }
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0, line[..<colon].allSatisfy(Framer.isTokenByte) else {
            fail("malformed header line", body)
            return
        }
        let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
        var newLength = length
        if name == "content-length" {
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingSpaces
            // Digits only (`Int` alone takes `+2`); a second Content-Length must say the same.
            guard !value.isEmpty, value.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), let parsed = Int(value)
            else {
                fail("invalid Content-Length", body)
                return
            }
            guard length == nil || length == parsed else {
                fail("two Content-Length headers that differ", body)
                return
            }
            newLength = parsed
        }
        state = .headers(length: newLength, bytes: bytes)
    }

    /// Reports an unreadable header block and starts looking for the next `Content-Length:`.
    private mutating func fail(_ reason: String, _ body: (FrameEvent) -> Void) {
        state = .seeking(matched: 0)
        pending = []
        body(.unreadable(reason))
    }

    /// Where `content-length:` (any case) starts in `line`, if it does.
    private static func lengthHeaderOffset(in line: [UInt8]) -> Int? {
        let pattern = lengthHeader
        guard line.count >= pattern.count else { return nil }
        for start in 0...(line.count - pattern.count) where lowercased(line[start]) == pattern[0] {
            if (1..<pattern.count).allSatisfy({ lowercased(line[start + $0]) == pattern[$0] }) { return start }
        }
        return nil
    }

    /// A byte allowed in a header name (RFC 9110 `tchar`).
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default: return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }

    /// The framing a peer whose first non-whitespace byte is `byte` uses.
    public static func framing(startingWith byte: UInt8) -> Framing {
        byte == UInt8(ascii: "C") || byte == UInt8(ascii: "c") ? .contentLength : .ndjson
    }

    /// The framing announced by the first non-whitespace byte of `chunk` (undetermined if none).
    public static func detect(_ chunk: UnsafeRawBufferPointer) -> Framing {
        for byte in chunk where !isWhitespace(byte) { return framing(startingWith: byte) }
        return .undetermined
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        var scalars = Substring(self)
        while scalars.first == " " || scalars.first == "\t" { scalars.removeFirst() }
        while scalars.last == " " || scalars.last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}
