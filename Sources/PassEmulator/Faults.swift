import Foundation
import JSON

/// An injected fault (README.md next to this file, `POST /__admin/faults`): which requests it hits and what it does.
struct Fault {
    enum Kind: String, CaseIterable {
        case latency, status, error, malformed, truncated, contentType, drop, throttle, redirect
    }

    /// HTTP method to match, or nil for any.
    var method: String?
    /// Path to match exactly, or a prefix when it ends with `*`.
    var path: String
    var kind: Kind
    /// latency: milliseconds; status: the HTTP status; error: the enhanced error code to answer with; contentType: the
    /// Content-Type to send; redirect: the `Location`.
    var value: JSON?
    /// Requests left to hit; nil = until `DELETE /__admin/faults`.
    var remaining: Int?
    /// Matching requests still to let through before it hits (`skip`): a fault for a later request of a sequence.
    var skipping = 0
    /// redirect: the 3xx status (default 302).
    var redirectStatus = 302

    func matches(_ request: HTTPRequest) -> Bool {
        if let method, method != "*", method.uppercased() != request.method.uppercased() { return false }
        if path.hasSuffix("*") { return request.path.hasPrefix(String(path.dropLast())) }
        return path == request.path
    }

    /// Parses the admin request body `{method?, path, kind, value?, count?, skip?, status?}` (`status` only for
    /// redirect).
    init(json: JSON) throws(Failure) {
        guard let path = json["path"]?.stringValue, !path.isEmpty else { throw Failure(.json(400, ["error": "path is required"])) }
        guard let kindName = json["kind"]?.stringValue, let kind = Kind(rawValue: kindName) else {
            throw Failure(.json(400, ["error": .string("kind must be one of \(Kind.allCases.map(\.rawValue).joined(separator: ", "))")]))
        }
        if let count = json["count"], !count.isNull, (count.intValue ?? 0) < 1 {
            throw Failure(.json(400, ["error": "count must be a positive integer"]))
        }
        if let skip = json["skip"], !skip.isNull {
            guard let number = skip.intValue, number >= 0 else {
                throw Failure(.json(400, ["error": "skip must be an integer, 0 or more"]))
            }
            skipping = number
        }
        switch kind {
        case .latency:
            guard let number = json["value"]?.intValue, number >= 0 else {
                throw Failure(.json(400, ["error": "latency needs the delay in milliseconds (an integer, 0 or more) as value"]))
            }
        case .status:
            guard let number = json["value"]?.intValue, (100...599).contains(number) else {
                throw Failure(.json(400, ["error": "status needs an HTTP status (an integer, 100-599) as value"]))
            }
        case .error:
            guard let code = json["value"]?.stringValue, EnhancedError.table[code] != nil else {
                let known = JSON.array(EnhancedError.table.keys.sorted().map { .string($0) })
                throw Failure(.json(400, ["error": "error needs a known enhanced error code as value", "known": known]))
            }
        case .redirect:
            guard let location = json["value"]?.stringValue, !location.isEmpty, Self.isHeaderValue(location) else {
                throw Failure(.json(400, ["error": "redirect needs the Location as value (no control character)"]))
            }
            if let status = json["status"], !status.isNull {
                guard let code = status.intValue, [301, 302, 303, 307, 308].contains(code) else {
                    throw Failure(.json(400, ["error": "redirect status must be 301, 302, 303, 307 or 308"]))
                }
                redirectStatus = code
            }
        case .contentType:
            if let value = json["value"], !value.isNull {
                guard let type = value.stringValue, !type.isEmpty, Self.isHeaderValue(type) else {
                    throw Failure(.json(400, ["error": "contentType needs the Content-Type as value (no control character), or none"]))
                }
            }
        default: break
        }
        self.method = json["method"]?.stringValue
        self.path = path
        self.kind = kind
        self.value = json["value"]
        self.remaining = json["count"]?.intValue
    }

    /// Whether `text` can be sent as an HTTP header's value as is: no CR, LF or other control character (a fault
    /// must not split the response it breaks into two).
    static func isHeaderValue(_ text: String) -> Bool {
        !text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }

    /// The 429 page Adobe's throttler sends (Adobe's "Throttling mechanism"): HTML, no Retry-After.
    static let throttlePage = """
        <html>\r
        <head><title>429 Too Many Requests</title></head>\r
        <body>\r
        <center><h1>429 Too Many Requests</h1></center>\r
        <hr><center>openresty</center>\r
        </body>\r
        </html>\r

        """

    /// Answers in place of the real handler (status, error, throttle, drop, redirect), or nil when the handler must run.
    func replacement() -> HTTPResponse? {
        switch kind {
        case .status:
            let status = value?.intValue ?? 500
            var body = EnhancedError.object("internal_server_error", status: status)
            if case .object(var object) = body {
                object["message"] = .string("Injected fault: HTTP \(status).")
                body = .object(object)
            }
            return .json(status, body)
        case .error:
            return EnhancedError.response(value?.stringValue ?? "internal_server_error")
        case .throttle:
            return HTTPResponse(status: 429, headers: [("Content-Type", "text/html")], body: Array(Fault.throttlePage.utf8))
        case .drop:
            var response = HTTPResponse(status: 500)
            response.delivery = .drop
            return response
        case .redirect:
            var response = HTTPResponse.redirect(value?.stringValue ?? "/")
            response.status = redirectStatus
            return response
        default:
            return nil
        }
    }

    /// Breaks a real response (malformed, truncated, contentType); other kinds leave it alone.
    func corrupt(_ response: HTTPResponse) -> HTTPResponse {
        var broken = response
        switch kind {
        case .malformed:
            broken.body = Array(response.body.prefix(response.body.count / 2)) + Array("\u{1}<<not json>>".utf8)
        case .truncated:
            if broken.body.count < 2 { broken.body = Array("{\"truncated\": true}".utf8) }
            broken.delivery = .truncated
        case .contentType:
            broken.headers.removeAll { $0.0.lowercased() == "content-type" }
            broken.headers.append(("Content-Type", value?.stringValue ?? "text/plain"))
        default: break
        }
        return broken
    }
}
