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
    /// Header names lower-cased.
    case response(status: Int, headers: [String: String], body: [UInt8])
    /// No usable response: timeout, refused or dropped connection, truncated body.
    case failure(TransportFailure)
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
