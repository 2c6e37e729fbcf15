import Glibc
import Synchronization

/// JSON-RPC over the process's stdin and stdout (Protocol/README.md).
///
/// The protocol is written to a private duplicate of fd 1, and fd 1 then points at stderr, so a stray
/// `print` can never corrupt the stream. Pipes and sockets are used non-blocking on the loop thread;
/// anything else (a file, a terminal, /dev/null) is relayed through a pipe by a helper thread.
/// At end of input the handler is told, outstanding requests get up to the shutdown timeout, what is
/// left is answered -32003, output is flushed, and ``run(_:)`` returns; a relayed output (a terminal, a file) then gets
/// up to the shutdown timeout again to be written out.
public final class StdioTransport: Sendable {
    private let loop = EventLoop()
    private let limits: ConnectionLimits
    private let inputFD: Int32
    private let outputFD: Int32
    private let outputRelayDone: DoneFlag?

    /// Takes over fds 0 and 1. Call once, early, before anything prints.
    public convenience init(limits: ConnectionLimits) {
        signal(SIGPIPE, SIG_IGN)
        let protocolFD = fcntl(1, F_DUPFD_CLOEXEC, 3)
        precondition(protocolFD >= 0, "dup of stdout failed: \(errnoString())")
        dup2(2, 1)
        self.init(inputFD: 0, outputFD: protocolFD, limits: limits)
    }

    /// Serves one peer on any pair of fds (the same fd twice for a socket), e.g. one end of a
    /// `socketpair(2)` in tests. The fds are owned by the transport and closed when it ends.
    public init(inputFD: Int32, outputFD: Int32, limits: ConnectionLimits) {
        signal(SIGPIPE, SIG_IGN)
        self.limits = limits
        self.inputFD = StdioTransport.isPollable(inputFD) ? inputFD : StdioTransport.relayInput(from: inputFD)
        if StdioTransport.isPollable(outputFD) {
            self.outputFD = outputFD
            outputRelayDone = nil
        } else {
            (self.outputFD, outputRelayDone) = StdioTransport.relayOutput(to: outputFD)
        }
        setNonBlocking(self.inputFD)
        setNonBlocking(self.outputFD)
    }

    /// Serves the one stdio connection until end of input or ``shutdown()``; blocks the caller.
    public func run(_ factory: @escaping RPCHandlerFactory) {
        loop.stopWhenEmpty = true
        loop.add(readFD: inputFD, writeFD: outputFD, isSocket: false, peer: nil, limits: limits, factory: factory)
        loop.run()
        // The loop has written everything into the relay's pipe, which a slow terminal may not take for a while: it
        // gets the shutdown timeout, as a pipe or a socket does (1 s lost the end of the output of a reader that paused).
        if let outputRelayDone {
            let deadline = monotonicNanos() + limits.shutdownTimeout.nanoseconds
            while !outputRelayDone.flag.load(ordering: .acquiring) && monotonicNanos() < deadline { usleep(1000) }
        }
    }

    /// Drains and stops (SIGTERM); callable from any thread.
    public func shutdown() { loop.requestShutdown() }

    private static func isPollable(_ fd: Int32) -> Bool {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return false }
        let type = info.st_mode & S_IFMT
        return type == S_IFIFO || type == S_IFSOCK
    }

    /// A pipe fed from `fd` by a thread doing blocking reads; returns the pipe's read end.
    private static func relayInput(from fd: Int32) -> Int32 {
        var ends: [Int32] = [0, 0]
        precondition(pipe(&ends) == 0, "pipe failed: \(errnoString())")
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        startThread {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                let ok = buffer.withUnsafeBytes { writeAll(writeEnd, UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                if !ok { break }
            }
            close(writeEnd)
        }
        return readEnd
    }

    /// A pipe drained into `fd` by a thread doing blocking writes; returns the write end and a flag set when done.
    private static func relayOutput(to fd: Int32) -> (Int32, DoneFlag?) {
        var ends: [Int32] = [0, 0]
        precondition(pipe(&ends) == 0, "pipe failed: \(errnoString())")
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        let box = DoneFlag()
        startThread {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                _ = buffer.withUnsafeBytes { writeAll(fd, UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            }
            close(readEnd)
            box.flag.store(true, ordering: .releasing)
        }
        return (writeEnd, box)
    }
}

/// Set by a relay thread when it has written everything.
final class DoneFlag: Sendable {
    let flag = Atomic<Bool>(false)
}
