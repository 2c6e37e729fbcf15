import AccessEnabler
import Glibc
import JSONRPC
import Synchronization

/// `pass-emulator` run as a child for `--backend emulator`: the binary beside `passbridge`,
/// on a free loopback port; its first stdout line is the base URL. Stopped with SIGTERM when the daemon exits.
final class EmulatorChild: Sendable {
    /// The software statement used with `--backend emulator` when none is given: an unsigned three-part JWT
    /// (`{"alg":"none","typ":"JWT"}` . `{"iss":"passbridge","software_id":"passbridge-offline"}` . `offline`), which
    /// the emulator accepts like any well-formed one (Sources/PassEmulator/README.md). Adobe would refuse it.
    static let developmentSoftwareStatement =
        "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJpc3MiOiJwYXNzYnJpZGdlIiwic29mdHdhcmVfaWQiOiJwYXNzYnJpZGdlLW9mZmxpbmUifQ.b2ZmbGluZQ"

    let pid: pid_t
    let baseURL: BackendURL
    /// Our end of the child's stdout, kept open so the child never writes into a closed pipe.
    private let output: Int32
    /// The write end of the child's stdin (`--exit-on-eof`), open for as long as this process lives.
    private let lifeline: Int32
    private let stopped = Mutex(false)

    private init(pid: pid_t, baseURL: BackendURL, output: Int32, lifeline: Int32) {
        self.pid = pid
        self.baseURL = baseURL
        self.output = output
        self.lifeline = lifeline
    }

    /// Starts the child and waits (at most `timeout`) for its base URL.
    static func launch(timeout: Duration = .seconds(15)) throws(CommandLineError) -> EmulatorChild {
        let binary = executableDirectory() + "/pass-emulator"
        guard access(binary, X_OK) == 0 else {
            throw .failure(
                "--backend emulator: \(binary) not found or not executable (pass-emulator must sit beside passbridge, as "
                    + "swift build and the Python wheel's emulator extra put it; the Debian package does not ship it; or give "
                    + "--backend URL of an emulator or of Adobe)")
        }
        var output: [Int32] = [-1, -1]
        // We hold the write end of the child's stdin until we exit, however we exit: then it sees end of input and stops.
        var lifeline: [Int32] = [-1, -1]
        guard pipe(&output) == 0, pipe(&lifeline) == 0 else {
            throw .failure("--backend emulator: no pipe: \(String(cString: strerror(errno)))")
        }
        // Close-on-exec everywhere: the child gets only the ends dup'ed to its stdin and stdout (else it would
        // hold the write end of its own lifeline and never see end of input).
        for fd in output + lifeline { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        guard let pid = spawn(binary, ["--port", "0", "--exit-on-eof"], stdin: lifeline[0], stdout: output[1]) else {
            (output + lifeline).forEach { close($0) }
            throw .failure("--backend emulator: cannot start \(binary): \(String(cString: strerror(errno)))")
        }
        close(lifeline[0])
        close(output[1])
        let line = firstLine(output[0], timeout: timeout)
        guard let line, line.hasPrefix("http://"), let url = try? BackendURL(line) else {
            // A child that ended its output is exiting: give it a second to be reaped, to say how it ended.
            let exited = reaped(pid, within: line == nil ? .seconds(1) : .zero)
            if exited == nil {
                var status: Int32 = 0
                kill(pid, SIGTERM)
                waitpid(pid, &status, 0)
            }
            close(output[0])
            close(lifeline[1])
            let why =
                exited.map { "exited (\(describe($0))) before printing its base URL" }
                ?? line.map { "printed '\($0.prefix(80))' where its base URL was expected" }
                ?? "printed no base URL within \(timeout.components.seconds) s"
            throw .failure("--backend emulator: pass-emulator \(why); --log-level debug shows its log")
        }
        // Debug, not info: an app that spawns `--backend emulator` shares the daemon's stderr, and a line for
        // what it asked for, going as asked, is noise there (`--log-level debug` shows it, with the child's log).
        Logger(label: "emulator").debug("pass-emulator started at \(line) (pid \(pid))")
        return EmulatorChild(pid: pid, baseURL: url, output: output[0], lifeline: lifeline[1])
    }

    /// posix_spawn with the given stdin and stdout, default signal handling and an empty signal mask (the
    /// daemon blocks the signals it reads through signalfd; the child must not inherit that). Its request log
    /// on stderr is debugging detail: shown at --log-level debug or trace only.
    private static func spawn(_ binary: String, _ arguments: [String], stdin: Int32, stdout: Int32) -> pid_t? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        if Logger.level > .debug { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var argv = ([binary] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let status = posix_spawn(&pid, binary, &actions, &attributes, &argv, environ)
        guard status == 0 else {
            errno = status
            return nil
        }
        return pid
    }

    /// Stops the child and reaps it; once. SIGTERM lets it finish the requests it is answering (a latency fault can
    /// hold one for many seconds); at `deadline` it gets SIGKILL, so that the daemon exits within
    /// its `--shutdown-timeout` (Protocol/README.md, "Lifecycle" 6).
    func stop(by deadline: ContinuousClock.Instant) {
        guard
            stopped.withLock({ done in
                defer { done = true }; return !done
            })
        else { return }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            if ContinuousClock.now >= deadline {
                kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0, errno == EINTR {}
                return
            }
            usleep(2_000)
        }
    }

    /// The folder of the running binary (`/proc/self/exe`, else argv[0]).
    static func executableDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let path = count > 0 ? String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
        return FilePath.parent(of: path)
    }

    /// Reads bytes up to the first newline, waiting with poll(2) until the deadline; nil on EOF or timeout.
    /// The wait status of `pid` once it has exited, polled every 10 ms for at most `within`; nil if it has not.
    static func reaped(_ pid: pid_t, within: Duration) -> Int32? {
        let deadline = ContinuousClock.now.advanced(by: within)
        var status: Int32 = 0
        while true {
            if waitpid(pid, &status, WNOHANG) == pid { return status }
            if ContinuousClock.now >= deadline { return nil }
            usleep(10_000)
        }
    }

    /// `status` from waitpid as a person reads it: `status 3`, or `signal 9`.
    static func describe(_ status: Int32) -> String {
        let signal = status & 0x7F
        return signal == 0 ? "status \((status >> 8) & 0xFF)" : "signal \(signal)"
    }

    static func firstLine(_ fd: Int32, timeout: Duration) -> String? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while ContinuousClock.now < deadline {
            var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pollFD, 1, 100)
            if ready < 0 && errno != EINTR { return nil }
            if ready <= 0 { continue }
            let count = read(fd, &byte, 1)
            if count <= 0 { return nil }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self).trimmingWhitespace() }
            bytes.append(byte)
        }
        return nil
    }
}
