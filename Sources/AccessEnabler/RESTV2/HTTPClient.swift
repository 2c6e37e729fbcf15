/// The engine's only way to the network: one request in, one result out. `HTTPTransport` is the real one;
/// tests substitute their own to drive interleavings without a backend.
protocol HTTPClient: Sendable {
    /// Sends `request` and waits at most `timeout` for the whole response; never throws (failures are results).
    /// Runs on the caller's executor (`isolation`), so that the caller resumes where it was without a hop
    /// through Swift's global pool.
    func perform(isolation: isolated (any Actor)?, _ request: RESTRequest, timeout: Duration) async -> HTTPResult
}

/// A request to send; header names as Adobe spells them.
struct RESTRequest: Sendable {
    var method: String
    /// The whole URL, on a `BackendURL` (https, or http on loopback): requests are made only by
    /// `Endpoint.request(on:token:device:)`.
    var url: String
    var headers: [(String, String)] = []
    var body: [UInt8]?
    /// The URL's path as the endpoint wrote it (escaped), for log lines.
    var path: String
}

/// One HTTP exchange's result.
enum HTTPResult: Sendable {
    case response(status: Int, headers: ResponseHeaders, body: [UInt8])
    /// No usable response: timeout, refused or dropped connection, truncated body.
    case failure(TransportFailure)
}

/// The response headers the client reads, each the value of its last line (spaces and tabs around it taken off);
/// every other header is passed over when it arrives. HTTP names are matched without regard to ASCII case.
struct ResponseHeaders: Sendable, Equatable {
    /// `Date`: the backend's clock, for the skew check (`Clock.observe(dateHeader:)`).
    var date: String?
    /// `Retry-After`: seconds to wait after a 429.
    var retryAfter: String?
    /// `Location`: a redirect's target, for the log line only (redirects are never followed).
    var location: String?
    /// `Content-Type`: whether the body is JSON.
    var contentType: String?

    /// Keeps `value()` when `name` (a header line's bytes before its colon, any case) is one of the four.
    mutating func take(name: UnsafeRawBufferPointer, value: () -> String) {
        func named(_ lowercase: StaticString) -> Bool {
            zip(name, UnsafeBufferPointer(start: lowercase.utf8Start, count: name.count)).allSatisfy { byte, expected in
                (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte) == expected
            }
        }
        switch name.count {
        case 4 where named("date"): date = value()
        case 8 where named("location"): location = value()
        case 11 where named("retry-after"): retryAfter = value()
        case 12 where named("content-type"): contentType = value()
        default: break
        }
    }
}

enum TransportFailure: Error, Equatable {
    case timeout
    case network
    /// The TLS handshake failed: the backend's certificate did not verify (a proxy, an interception), or no
    /// secure channel could be agreed (status SEC420).
    case insecure
    /// No HTTP at all: libcurl could not be loaded (the loader's reason, e.g. "libcurl.so.4: cannot open shared object file").
    case unavailable(String)
}
