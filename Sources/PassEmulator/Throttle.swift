import Foundation
import JSON

/// The built-in throttle's settings (configuration key `throttle`, or `POST /__admin/throttle`). Adobe's
/// "Throttling mechanism" page: a token bucket per identified device (by `X-Forwarded-For`), 1 request per second
/// after a one-time burst of 10, on `/o/client/…` and all of `/api/v2/…`; over the limit, 429 with an HTML body.
public struct ThrottleSettings: Sendable, Equatable {
    /// What identifies a caller: `address` (first `X-Forwarded-For` entry, else the peer address, which is always
    /// 127.0.0.1 here: Adobe's rule), `device` (`AP-Device-Identifier`) or `client` (the bearer's DCR client).
    public enum Key: String, Sendable, CaseIterable {
        case address, device, client
    }

    /// Steady rate once the burst is spent, requests per second (> 0; default 1).
    public var requestsPerSecond: Double
    /// One-time allowance on a caller's first requests (default 10).
    public var burst: Int64
    public var per: Key
    /// Whether a 429 carries `Retry-After` (seconds until the next request is admitted, at least 1). Adobe's
    /// documented 429 has none; the default here is true, and false gives Adobe's exact answer.
    public var retryAfter: Bool

    init(_ reader: Reader) throws(ConfigError) {
        requestsPerSecond = try reader.double("requestsPerSecond", default: 1)
        guard requestsPerSecond > 0 else { throw reader.fail("requestsPerSecond", "expected a number above 0") }
        burst = try reader.int("burst", default: 10)
        let name = try reader.string("per", default: Key.address.rawValue)
        guard let per = Key(rawValue: name) else {
            throw reader.fail("per", "expected \(Key.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self.per = per
        retryAfter = try reader.bool("retryAfter", default: true)
    }

    var json: JSON {
        [
            "requestsPerSecond": .double(requestsPerSecond), "burst": .integer(burst), "per": .string(per.rawValue),
            "retryAfter": .bool(retryAfter),
        ]
    }

    /// Whether Adobe throttles this path: DCR and REST API V2 (admin calls and the browser pages are never throttled).
    static func applies(to path: String) -> Bool { path.hasPrefix("/o/client/") || path.hasPrefix("/api/v2/") }
}

/// The throttle's buckets, one per caller key. Time is the emulator's clock, so `/__admin/clock` refills them too.
struct Throttle {
    let settings: ThrottleSettings
    private var buckets: [String: Bucket] = [:]

    private struct Bucket {
        var tokens: Double
        var updated: Int64
    }

    init(_ settings: ThrottleSettings) { self.settings = settings }

    /// Takes one request's token for `key` at `now` (ms): nil when admitted, else the whole seconds to wait (≥ 1).
    /// A caller starts with `burst` tokens; refills run at `requestsPerSecond` up to one second's worth (at least one).
    mutating func take(_ key: String, now: Int64) -> Int? {
        let rate = settings.requestsPerSecond
        let ceiling = max(1, rate)
        var bucket = buckets[key] ?? Bucket(tokens: Double(settings.burst), updated: now)
        if bucket.tokens < ceiling {
            bucket.tokens = min(ceiling, bucket.tokens + Double(max(0, now - bucket.updated)) / 1000 * rate)
        }
        bucket.updated = now
        defer { buckets[key] = bucket }
        if bucket.tokens >= 1 {
            bucket.tokens -= 1
            return nil
        }
        return max(1, Int(((1 - bucket.tokens) / rate).rounded(.up)))
    }
}

extension Emulator {
    /// The 429 for a request over the throttle's limit, or nil when it may go on.
    func throttled(_ request: HTTPRequest) -> HTTPResponse? {
        guard ThrottleSettings.applies(to: request.path) else { return nil }
        let now = clock.nowMillis()
        return state.withLock { state -> HTTPResponse? in
            guard let settings = state.throttle?.settings else { return nil }
            let key = throttleKey(request, settings.per, tokens: state.tokens)
            guard let wait = state.throttle?.take(key, now: now) else { return nil }
            var headers = [("Content-Type", "text/html")]
            if settings.retryAfter { headers.append(("Retry-After", String(wait))) }
            return HTTPResponse(status: 429, headers: headers, body: Array(Fault.throttlePage.utf8))
        }
    }

    private func throttleKey(_ request: HTTPRequest, _ per: ThrottleSettings.Key, tokens: [String: AccessToken]) -> String {
        let forwarded = request.header("x-forwarded-for")?.split(separator: ",").first.map { Trim.whitespace(String($0)) }
        let address = "address " + (forwarded.flatMap(nonEmpty) ?? "127.0.0.1")
        switch per {
        case .address:
            return address
        case .device:
            return request.header("ap-device-identifier").map { "device " + $0 } ?? address
        case .client:
            if let bearer = request.header("authorization"), bearer.lowercased().hasPrefix("bearer "),
                let token = tokens[Trim.whitespace(String(bearer.dropFirst(7)))]
            {
                return "client " + token.clientID
            }
            return (request.form["client_id"] ?? request.query["client_id"]).map { "client " + $0 } ?? address
        }
    }
}
