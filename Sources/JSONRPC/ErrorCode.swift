import JSON

/// A JSON-RPC 2.0 error code (spec §5.1): the reserved protocol codes and PassBridge's daemon codes.
///
/// A struct of named constants rather than an enum, so callers can use any integer code
/// (application errors live outside -32768…-32000). Daemon-level codes sit in -32000…-32099
/// and are listed in `Protocol/openrpc.json`.
public struct ErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int

    public init(rawValue: Int) { self.rawValue = rawValue }

    // MARK: JSON-RPC 2.0 (spec §5.1)

    /// -32700: the text received is not valid JSON.
    public static let parseError = ErrorCode(rawValue: -32700)
    /// -32600: the JSON is not a valid Request object.
    public static let invalidRequest = ErrorCode(rawValue: -32600)
    /// -32601: no such method.
    public static let methodNotFound = ErrorCode(rawValue: -32601)
    /// -32602: the params have the wrong type, or a required one is missing.
    public static let invalidParams = ErrorCode(rawValue: -32602)
    /// -32603: the daemon failed while handling the request.
    public static let internalError = ErrorCode(rawValue: -32603)

    // MARK: PassBridge daemon codes (-32000…-32099, Protocol/README.md "Errors")

    /// -32000: the connection closed before a daemon→host request was answered (never sent on the wire).
    public static let connectionClosed = ErrorCode(rawValue: -32000)
    /// -32001: a daemon→host request got no answer within its timeout (never sent on the wire).
    public static let requestTimedOut = ErrorCode(rawValue: -32001)
    /// -32002: the method needs a requestor and no `setRequestor` was ever sent.
    public static let requestorNotSet = ErrorCode(rawValue: -32002)
    /// -32003: the daemon is shutting down and could not finish the request in time.
    public static let shuttingDown = ErrorCode(rawValue: -32003)
    /// -32004: too many requests in flight on this connection, or a message over the size limit.
    public static let overloaded = ErrorCode(rawValue: -32004)
    /// -32005: a socket peer that may not use the daemon (sent once, with `id` null, before the close).
    public static let accessDenied = ErrorCode(rawValue: -32005)

    /// -32800: the request was cancelled by the peer's `$/cancelRequest` (the code the Language Server Protocol
    /// gives RequestCancelled, which JSON-RPC host libraries know).
    public static let requestCancelled = ErrorCode(rawValue: -32800)

    public var description: String { String(rawValue) }
}

/// A JSON-RPC 2.0 error object (spec §5.1): `{"code", "message", "data"?}`.
///
/// Daemon codes (-32000…-32099) always carry a `data` object.
public struct ErrorObject: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: ErrorCode
    /// One concise sentence.
    public var message: String
    public var data: JSON?

    public init(code: ErrorCode, message: String, data: JSON? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    /// The wire form `{"code":…,"message":…[,"data":…]}`.
    public var json: JSON {
        var object: JSONObject = ["code": .integer(Int64(code.rawValue)), "message": .string(message)]
        if let data { object["data"] = data }
        return .object(object)
    }

    /// Reads an error object received from a peer; nil unless `code` is an integer and `message` a string.
    public init?(json: JSON) {
        guard let code = json["code"]?.int64Value, case .integer = json["code"]!, let message = json["message"]?.stringValue else {
            return nil
        }
        self.init(code: ErrorCode(rawValue: Int(code)), message: message, data: json["data"])
    }

    public var description: String { json.serializedString() }

    /// -32700 for text that is not JSON; `data` gives the parser's reason and byte offset.
    public static func parseError(_ detail: JSONParseError? = nil) -> ErrorObject {
        let data: JSON? = detail.map { ["reason": .string($0.message), "offset": .integer(Int64($0.offset))] }
        return ErrorObject(code: .parseError, message: "Parse error", data: data)
    }

    /// The answer to a message the parser turned down (sent with `id` null, as the message was never read):
    /// -32700 ``parseError(_:)`` `{reason, offset}` for text that is not JSON, -32600 ``invalidRequest(_:)``
    /// `{reason}` for valid JSON the parser refuses (a repeated member name, U+0000 in a member name; the reason
    /// names the member). Protocol/README.md "Errors".
    public static func parseFailure(_ detail: JSONParseError) -> ErrorObject {
        switch detail.kind {
        case .invalidText: return parseError(detail)
        case .refusedMemberName: return invalidRequest(detail.message)
        }
    }

    /// -32600 with the reason in `data`.
    public static func invalidRequest(_ reason: String? = nil) -> ErrorObject {
        ErrorObject(code: .invalidRequest, message: "Invalid Request", data: reason.map { ["reason": .string($0)] })
    }

    /// -32601 naming the method in `data`, and `closest`, a method the server does serve whose name is near it, in
    /// `data.closest` and the message (`Method not found: 'getAuthorisation'; did you mean 'getAuthorization'?`).
    /// Protocol/README.md "Errors".
    public static func methodNotFound(_ method: String, closest: String?) -> ErrorObject {
        guard let closest else {
            return ErrorObject(code: .methodNotFound, message: "Method not found", data: ["method": .string(method)])
        }
        return ErrorObject(
            code: .methodNotFound, message: "Method not found: '\(method)'; did you mean '\(closest)'?",
            data: ["method": .string(method), "closest": .string(closest)])
    }

    /// -32602 with the reason in `data`.
    public static func invalidParams(_ reason: String) -> ErrorObject {
        ErrorObject(code: .invalidParams, message: "Invalid params", data: ["reason": .string(reason)])
    }

    /// -32603 with the reason in `data`.
    public static func internalError(_ reason: String) -> ErrorObject {
        ErrorObject(code: .internalError, message: "Internal error", data: ["reason": .string(reason)])
    }

    /// -32002: no `setRequestor` was sent to this instance; `afterInit`: one was, to an instance a later `init`
    /// replaced (Protocol/README.md, Lifecycle 2).
    public static func requestorNotSet(afterInit: Bool = false) -> ErrorObject {
        let reason =
            afterInit
            ? "call setRequestor first: the init sent after the last setRequestor started a new instance, which has none"
            : "call setRequestor first"
        return ErrorObject(code: .requestorNotSet, message: "Requestor not set", data: ["reason": .string(reason)])
    }

    /// -32003: the daemon is shutting down.
    public static func shuttingDown() -> ErrorObject {
        ErrorObject(code: .shuttingDown, message: "Shutting down", data: ["reason": "the daemon is shutting down"])
    }

    /// -32800: the host cancelled this request (`$/cancelRequest`); `data` names the method.
    public static func requestCancelled(method: String) -> ErrorObject {
        ErrorObject(
            code: .requestCancelled, message: "Request cancelled",
            data: ["reason": "cancelled by $/cancelRequest", "method": .string(method)])
    }

    /// -32004: too many requests in flight; `data` gives the limit.
    public static func overloaded(inFlightLimit: Int) -> ErrorObject {
        ErrorObject(
            code: .overloaded, message: "Overloaded",
            data: ["reason": "too many requests in flight", "limit": .integer(Int64(inFlightLimit))])
    }

    /// -32004: a batch whose answers would pass the output high-water mark (bytes); `data` gives the mark.
    public static func outputOverLimit(limit: Int) -> ErrorObject {
        ErrorObject(
            code: .overloaded, message: "Overloaded",
            data: ["reason": "the batch's answers exceed the output limit", "limit": .integer(Int64(limit))])
    }

    /// -32005: the peer may not connect; `data.reason` says who may.
    public static func accessDenied(_ reason: String) -> ErrorObject {
        ErrorObject(code: .accessDenied, message: "Access denied", data: ["reason": .string(reason)])
    }

    /// -32004: a message over the size limit (bytes); `data` gives the limit.
    public static func messageTooLarge(limit: Int) -> ErrorObject {
        ErrorObject(
            code: .overloaded, message: "Message too large", data: ["reason": "message too large", "limit": .integer(Int64(limit))])
    }
}

/// A request id exactly as the peer sent it (spec §4): a string, a number (integers beyond
/// Int64 stay `.bigInteger` with their digits), or null. Echoed back unchanged in the response.
public struct RequestID: Hashable, Sendable, CustomStringConvertible {
    public let json: JSON

    public init(json: JSON) { self.json = json }

    /// A string id.
    public init(_ string: String) { json = .string(string) }

    /// An integer id.
    public init(_ number: Int64) { json = .integer(number) }

    /// Whether `value` may be an id: a string, a number or null.
    public static func isValid(_ value: JSON) -> Bool {
        switch value {
        case .string, .integer, .bigInteger, .double, .null: return true
        case .bool, .array, .object: return false
        }
    }

    public var description: String { json.serializedString() }
}
