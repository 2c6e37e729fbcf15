import Glibc

/// The conventions every PassBridge executable shares with swift-argument-parser: `-h`/`--help` prints the usage
/// on stdout and `--version` the version, wherever they appear (exit 0); a usage error is one line on stderr,
/// `PROGRAM: MESSAGE (see PROGRAM --help)` (exit 2); a failure is one line on stderr (exit 1).
public struct CommandLineProgram: Sendable {
    /// The name in messages, e.g. `passbridge` or `passbridge state`.
    public let name: String
    public let version: String
    /// Built only when `--help` asks (a usage rendered from an ``OptionTable`` costs nothing at a normal start).
    private let makeUsage: @Sendable () -> String

    /// The text `--help` prints.
    public var usage: String { makeUsage() }

    public init(name: String, version: String, usage: @autoclosure @escaping @Sendable () -> String) {
        self.name = name
        self.version = version
        makeUsage = usage
    }

    /// The exit status of `--help` or `--version` when `arguments` hold one (after printing), else nil.
    public func helpOrVersion(_ arguments: [String]) -> Int32? {
        if arguments.contains(where: { $0 == "-h" || $0 == "--help" }) {
            writeOut(usage)
            return 0
        }
        if arguments.contains("--version") {
            writeOut("\(name) \(version)\n")
            return 0
        }
        return nil
    }

    /// Prints `error` as a usage error and returns 2.
    public func usageError(_ error: UsageError) -> Int32 {
        writeError("\(name): \(error.message) (see \(name) --help)")
        return 2
    }

    /// Prints `message` as a failure and returns 1.
    public func failure(_ message: String) -> Int32 {
        writeError("\(name): \(message)")
        return 1
    }

    /// Raises the process's soft limit on open files to its hard limit, as a server that holds a descriptor per
    /// client should (systemd.exec(5), `LimitNOFILE=`: the soft limit stays 1024 for the sake of `select(2)`, which
    /// these programs do not use, and a program that needs more raises it itself). Returns the soft limit now in
    /// force (unchanged when it cannot be raised).
    @discardableResult
    public static func raiseOpenFileLimit() -> Int {
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur == rlim_t.max ? Int(Int32.max) : Int(clamping: limit.rlim_cur)
    }
}

/// Writes `text` to stdout (help, version, command output), waiting while a non-blocking stdout is full.
public func writeOut(_ text: String) {
    write(all: Array(text.utf8), to: 1)
}

/// Writes `text` to stderr as it is: lines the caller made printable itself, as `passbridge state` writes the
/// logins it names, so that they read as its stdout shows them.
public func writeErrorLines(_ text: String) {
    write(all: Array(text.utf8), to: 2)
}

/// Writes `line` and a newline to stderr, on one line whatever it holds (``oneLine(_:)``).
public func writeError(_ line: String) {
    write(all: Array((oneLine(line) + "\n").utf8), to: 2)
}

/// `text` as one unambiguous line of stderr, as every program of the package writes its usage errors and log lines
/// (the daemon's `Logger`, the emulator's `log`): a control character (a newline in a value a user or a host gave;
/// C1's NEL too), Unicode's line and paragraph separators and invisible format characters (bidirectional
/// overrides, zero-width characters, U+FEFF) as `\u{…}`, a backslash as `\\`, so that no value can end a line, for
/// a terminal or a log reader, forge the next one, or pass for an escape.
public func oneLine(_ text: String) -> String {
    func isEscaped(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0x5C: return true
        case 0..<0x80: return false
        default: return scalar.properties.generalCategory == .format
        }
    }
    guard text.unicodeScalars.contains(where: isEscaped) else { return text }
    var line = ""
    for scalar in text.unicodeScalars {
        if scalar == "\\" {
            line += "\\\\"
        } else if isEscaped(scalar) {
            line += "\\u{" + String(scalar.value, radix: 16) + "}"
        } else {
            line.unicodeScalars.append(scalar)
        }
    }
    return line
}

private func write(all bytes: [UInt8], to fd: Int32) {
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        if written > 0 {
            offset += written
        } else if written < 0 && errno == EINTR {
            continue
        } else if written < 0 && errno == EAGAIN {
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            _ = poll(&poller, 1, -1)
        } else {
            return
        }
    }
}
