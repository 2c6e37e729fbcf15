import CShims
import Glibc
import Synchronization

/// Where log lines go: a bounded in-memory queue that one thread of its own writes to stderr.
///
/// ``enqueue(_:)`` never blocks and never makes a system call but a wake-up: a stderr that is a pipe nobody reads,
/// or a slow journald, stalls only the writer thread. When the queue is full, lines are dropped and counted; once
/// the queue has drained, one line says how many were lost. The writer waits for stderr with poll(2), so a stderr
/// that shares the protocol fd's non-blocking open file description loses nothing either.
final class LogQueue: Sendable {
    static let shared = LogQueue()

    /// Bytes of lines held at most.
    static let capacity = 256 * 1024

    private struct State {
        var lines: [[UInt8]] = []
        var bytes = 0
        var dropped = 0
        /// Lines taken by the writer and not yet written.
        var writing = 0
    }

    private let state = Mutex(State())
    /// Wakes the writer thread (an eventfd: its counter is the number of wake-ups).
    private let wakeFD: Int32

    private init() {
        wakeFD = cshims_eventfd()
        let wake = wakeFD
        startThread { [self] in
            // Termination signals belong to the signal thread, even if this thread started before it.
            var signals = TerminationSignals.set
            pthread_sigmask(SIG_BLOCK, &signals, nil)
            while true {
                var poller = pollfd(fd: wake, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, -1) > 0 else { continue }
                cshims_eventfd_drain(wake)
                writePending()
            }
        }
        atexit { LogQueue.shared.drain(timeoutNanos: 1_000_000_000) }
    }

    /// Queues one whole line (with its newline); drops it when the queue is full.
    func enqueue(_ line: [UInt8]) {
        let queued = state.withLock { state -> Bool in
            guard state.bytes + line.count <= LogQueue.capacity else {
                state.dropped += 1
                return false
            }
            state.lines.append(line)
            state.bytes += line.count
            return true
        }
        if queued { cshims_eventfd_signal(wakeFD) }
    }

    /// Waits (at exit) until the queue is written, at most `timeoutNanos`.
    func drain(timeoutNanos: UInt64) {
        let deadline = monotonicNanos() + timeoutNanos
        while monotonicNanos() < deadline {
            if state.withLock({ $0.lines.isEmpty && $0.writing == 0 && $0.dropped == 0 }) { return }
            usleep(1000)
        }
    }

    /// Writer thread: writes everything queued, then the count of lines dropped meanwhile.
    private func writePending() {
        while true {
            let (lines, dropped) = state.withLock { state -> ([[UInt8]], Int) in
                let taken = state.lines
                state.lines = []
                state.bytes = 0
                // The count is reported once the queue has drained, after the lines that were kept.
                let dropped = taken.isEmpty ? state.dropped : 0
                state.dropped -= dropped
                state.writing = taken.count + (dropped > 0 ? 1 : 0)
                return (taken, dropped)
            }
            if lines.isEmpty && dropped == 0 { return }
            if dropped > 0 {
                writeToStderr(Logger.format(.warning, label: "log", "\(dropped) log lines dropped: stderr was not read fast enough"))
            }
            for line in lines { writeToStderr(line) }
            state.withLock { $0.writing = 0 }
        }
    }

    /// Writes all of `line` to fd 2, waiting for it to be writable when it is non-blocking and full.
    private func writeToStderr(_ line: [UInt8]) {
        line.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                    var poller = pollfd(fd: 2, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&poller, 1, -1)
                } else {
                    return
                }
            }
        }
    }
}
