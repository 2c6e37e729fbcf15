import ArgumentParsing
import Foundation
import Glibc
import JSON
import Synchronization

/// The Adobe Pass REST API V2 + DCR emulator (README.md next to this file). Thread-safe: libmicrohttpd calls
/// `respond(to:)` from one thread per connection; all mutable state sits behind `state`.
public final class Emulator: HTTPResponder, Sendable {
    public let config: EmulatorConfig
    public let clock: EmulatorClock
    /// The media-token and SAML signing key.
    public let key: RSAKey
    let state: Mutex<EmulatorState>
    private let base = Mutex("http://127.0.0.1")

    public init(config: EmulatorConfig, key: RSAKey, clock: EmulatorClock = EmulatorClock()) {
        self.config = config
        self.key = key
        self.clock = clock
        self.state = Mutex(EmulatorState(throttle: config.throttle.map(Throttle.init)))
    }

    /// The emulator's own base URL (`http://127.0.0.1:PORT`), used in absolute URLs it hands out.
    public var baseURL: String {
        get { base.withLock { $0 } }
        set { base.withLock { $0 = newValue } }
    }

    /// Applies the throttle, then any matching fault, routes the request, and stamps the `Date` header from the
    /// emulator's clock.
    public func respond(to request: HTTPRequest) -> HTTPResponse {
        let admin = request.path.hasPrefix("/__admin/")
        record(request)
        let refused = throttled(request)
        let fault = refused != nil || admin ? nil : takeFault(for: request)
        var response: HTTPResponse
        if let refused {
            response = refused
        } else if let replaced = fault?.replacement() {
            response = replaced
        } else {
            response = route(request)
            if let fault { response = fault.corrupt(response) }
        }
        if let fault, fault.kind == .latency { response.delay = .milliseconds(max(0, min(fault.value?.intValue ?? 0, 120_000))) }
        response.headers.append(("Date", HTTPDate.format(millis: clock.nowMillis())))
        response.headers.append(("Cache-Control", "no-store"))
        let note = refused != nil ? " [throttled]" : fault.map { " [fault \($0.kind.rawValue)]" } ?? ""
        log("\(request.method) \(request.path) -> \(response.status)\(note)")
        return response
    }

    private func takeFault(for request: HTTPRequest) -> Fault? {
        state.withLock { state in
            guard let index = state.faults.firstIndex(where: { $0.matches(request) }) else { return nil }
            let fault = state.faults[index]
            if fault.skipping > 0 {
                state.faults[index].skipping -= 1
                return nil
            }
            if let remaining = fault.remaining {
                if remaining <= 1 { state.faults.remove(at: index) } else { state.faults[index].remaining = remaining - 1 }
            }
            return fault
        }
    }

    /// Dispatches by path; see README.md for the table.
    func route(_ request: HTTPRequest) -> HTTPResponse {
        let parts = request.segments
        do throws(Failure) {
            switch parts.first {
            case "o": return try routeDCR(request, parts)
            case "api" where parts.count >= 2 && parts[1] == "v2": return try routeV2(request, Array(parts.dropFirst(2)))
            case "mock-mvpd": return try routeMockMVPD(request, Array(parts.dropFirst()))
            case "sp" where parts == ["sp", "assertion"]: return try assertionConsumer(request)
            case "activate": return try activation(request, Array(parts.dropFirst()))
            case "__admin": return try routeAdmin(request, Array(parts.dropFirst()))
            default: return .text(404, "Not Found\n")
            }
        } catch {
            return error.response
        }
    }

    private func routeDCR(_ request: HTTPRequest, _ parts: [String]) throws(Failure) -> HTTPResponse {
        switch (request.method, parts) {
        case ("POST", ["o", "client", "register"]): return register(request)
        case ("POST", ["o", "client", "token"]): return issueToken(request)
        case (_, ["o", "client", "register"]), (_, ["o", "client", "token"]): return .json(405, ["error": "invalid_request"])
        default: return .text(404, "Not Found\n")
        }
    }

    private func routeV2(_ request: HTTPRequest, _ parts: [String]) throws(Failure) -> HTTPResponse {
        let method = request.method
        if parts.count == 3, parts[0] == "authenticate" {
            guard method == "GET" else { return .html(405, page(title: "Method Not Allowed", body: "<p>Use GET.</p>")) }
            return authenticatePage(serviceProvider: parts[1], code: parts[2])
        }
        guard parts.count >= 2 else { return .text(404, "Not Found\n") }
        let rest = Array(parts.dropFirst())
        let sp = parts[0]
        switch (method, rest.count, rest[0]) {
        case ("GET", 1, "configuration"): return try configuration(request, sp)
        case ("POST", 1, "sessions"): return try createSession(request, sp)
        case ("POST", 3, "sessions") where rest[1] == "sso": return try partnerSession(request, sp, partner: rest[2])
        case ("POST", 2, "sessions"): return try resumeSession(request, sp, code: rest[1])
        case ("GET", 2, "sessions"): return try retrieveSession(request, sp, code: rest[1])
        case ("GET", 1, "profiles"): return try profiles(request, sp, mvpd: nil)
        case ("GET", 3, "profiles") where rest[1] == "code": return try profileForCode(request, sp, code: rest[2])
        case ("POST", 3, "profiles") where rest[1] == "sso": return try partnerProfile(request, sp, partner: rest[2])
        case ("GET", 2, "profiles"): return try profiles(request, sp, mvpd: rest[1])
        case ("POST", 3, "decisions") where rest[1] == "authorize" || rest[1] == "preauthorize":
            return try decisions(request, sp, mvpd: rest[2], authorize: rest[1] == "authorize")
        case ("GET", 2, "logout"): return try logoutAction(request, sp, mvpd: rest[1])
        default:
            let known = ["configuration", "sessions", "profiles", "decisions", "logout"].contains(rest[0])
            if known {
                var body = EnhancedError.object("internal_server_error", status: 405)
                if case .object(var object) = body {
                    object["message"] = "The HTTP method is not supported on this path."; body = .object(object)
                }
                return .json(405, body)
            }
            return .text(404, "Not Found\n")
        }
    }
}

/// Writes one log line to stderr (never tokens or secrets): `TIME pass-emulator: MESSAGE`, TIME in RFC 3339, UTC,
/// milliseconds; without TIME when stderr is the journal, which stamps lines itself (``LogLine``).
func log(_ message: String) {
    let line = Array(LogLine.format(message, journald: LogLine.journald, now: Date()).utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

/// The start of the emulator's log lines; the daemon's follow the same rule (its `Logger`).
enum LogLine {
    /// Whether stderr is the journal: `JOURNAL_STREAM` (`DEVICE:INODE`) names fd 2 (systemd.exec(5), "Environment
    /// variables in spawned processes"); a child whose stderr was redirected inherits the variable, not the stream.
    static let journald = isJournal(ProcessInfo.processInfo.environment["JOURNAL_STREAM"], fd: 2)

    /// True when `journalStream` holds the device and inode of `fd`, in decimal, as `DEVICE:INODE`.
    static func isJournal(_ journalStream: String?, fd: Int32) -> Bool {
        let parts = journalStream?.split(separator: ":", omittingEmptySubsequences: false) ?? []
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        return fstat(fd, &info) == 0 && UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    /// One line, with its newline.
    static func format(_ message: String, journald: Bool, now: Date) -> String {
        let stamp = journald ? "" : timestamp(now) + " "
        return "\(stamp)pass-emulator: \(oneLine(message))\n"
    }

    /// `2026-12-01T21:35:27.203Z`: RFC 3339, UTC, milliseconds (what `Date.ISO8601FormatStyle` with fractional
    /// seconds writes), without Foundation's formatter, which cost more than the rest of a request.
    static func timestamp(_ now: Date) -> String {
        let millis = Int64((now.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(millis >= 0 ? millis / 1000 : (millis - 999) / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func digits(_ value: Int32, _ count: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, count - text.count)) + text
        }
        return "\(digits(parts.tm_year + 1900, 4))-\(digits(parts.tm_mon + 1, 2))-\(digits(parts.tm_mday, 2))T"
            + "\(digits(parts.tm_hour, 2)):\(digits(parts.tm_min, 2)):\(digits(parts.tm_sec, 2)).\(digits(Int32(millis - Int64(seconds) * 1000), 3))Z"
    }
}

/// A random string of `length` characters from `[A-Z0-9]` (authentication codes) or hex.
enum Random {
    static func code(_ length: Int = 7) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return String((0..<length).map { _ in alphabet.randomElement()! })
    }

    static func hex(_ bytes: Int) -> String {
        Digest.hex((0..<bytes).map { _ in UInt8.random(in: 0...255) })
    }

    static func uuid() -> String { UUID().uuidString.lowercased() }
}
