import JSON

/// One JSON-RPC 2.0 message received from a peer, classified per spec §§4–6.
public enum IncomingMessage: Sendable, Equatable {
    /// A request (`id` present, possibly null) or a notification (`id` nil). `params` is nil when
    /// absent or null, else an array or object.
    case request(method: String, params: JSON?, id: RequestID?)
    /// A response to a request this side sent.
    case response(id: RequestID, result: Result<JSON, ErrorObject>)
    /// Not a valid message: answered with `error` and `id` (null when it could not be read).
    case invalid(id: RequestID?, error: ErrorObject)
    /// A response that is not a valid one (`id` nil: none that could be matched): never answered; one with the id
    /// of a request this side is waiting for ends that request as an error (`Connection.unusable`).
    case unusableResponse(id: RequestID?, reason: String)
    /// An object with an id but neither a method nor a result or an error: a broken response when this side waits
    /// for a request of that id (`Connection.unusable`), else an invalid request, answered -32600 "no method".
    case neitherRequestNorResponse(id: RequestID)

    /// Classifies one element of the top level (a single message or one member of a batch).
    public init(_ json: JSON) {
        guard case .object(let object) = json else {
            self = .invalid(id: nil, error: .invalidRequest("a message must be an object"))
            return
        }
        var id: RequestID?
        if let rawID = object["id"] {
            guard RequestID.isValid(rawID) else {
                self = .invalid(id: nil, error: .invalidRequest("id must be a string, a number or null"))
                return
            }
            id = RequestID(json: rawID)
        }
        guard object["jsonrpc"] == .string("2.0") else {
            // A response (no method, a result or an error) is never answered, not even a malformed one.
            let response = object["method"] == nil && (object["result"] != nil || object["error"] != nil)
            if response, let id, !id.json.isNull {
                self = .unusableResponse(id: id, reason: "jsonrpc must be \"2.0\"")
            } else {
                self = .invalid(id: id, error: .invalidRequest("jsonrpc must be \"2.0\""))
            }
            return
        }
        if let method = object["method"] {
            guard case .string(let name) = method else {
                self = .invalid(id: id, error: .invalidRequest("method must be a string"))
                return
            }
            let params = object["params"]
            switch params {
            case nil, .null?:
                self = .request(method: name, params: nil, id: id)
            case .array?, .object?:
                self = .request(method: name, params: params, id: id)
            default:
                self = .invalid(id: id, error: .invalidRequest("params must be an object of named params, or omitted"))
            }
            return
        }
        let result = object["result"]
        let error = object["error"]
        if result != nil || error != nil {
            guard let id, !id.json.isNull else {
                self = .unusableResponse(id: nil, reason: "response without an id")
                return
            }
            if let result, error == nil {
                self = .response(id: id, result: .success(result))
            } else if let error, result == nil, let errorObject = ErrorObject(json: error) {
                self = .response(id: id, result: .failure(errorObject))
            } else {
                let reason = result != nil && error != nil ? "both a result and an error" : "error is no error object {code, message}"
                self = .unusableResponse(id: id, reason: reason)
            }
            return
        }
        if let id, !id.json.isNull {
            self = .neitherRequestNorResponse(id: id)
        } else {
            self = .invalid(id: id, error: .invalidRequest("no method"))
        }
    }
}

/// Encoders for the messages this side writes; each returns one compact JSON text without framing.
///
/// Member order is fixed — `jsonrpc`, then `id`, then `result`/`error` (responses), or `jsonrpc`,
/// `method`, `params`, then `id` (requests and notifications) — so simple line-based clients can rely on it.
public enum OutgoingMessage {
    /// `{"jsonrpc":"2.0","id":ID,"result":RESULT}`.
    public static func response(id: RequestID?, result: JSON) -> [UInt8] {
        response(id: id, member: #","result":"#, reserving: 192) { result.serialize(into: &$0) }
    }

    /// `{"jsonrpc":"2.0","id":ID,"result":RESULT}` with RESULT already compact JSON text (copied, not parsed).
    public static func response(id: RequestID?, encodedResult: [UInt8]) -> [UInt8] {
        response(id: id, member: #","result":"#, reserving: encodedResult.count) { $0 += encodedResult }
    }

    /// `{"jsonrpc":"2.0","id":ID,"error":{…}}` (id null when unknown).
    public static func response(id: RequestID?, error: ErrorObject) -> [UInt8] {
        response(id: id, member: #","error":"#, reserving: 128) { error.json.serialize(into: &$0) }
    }

    /// A response written straight into one buffer: the envelope, the id, `member`, then what `body` appends.
    private static func response(id: RequestID?, member: StaticString, reserving: Int, _ body: (inout [UInt8]) -> Void) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64 + reserving)
        bytes += #"{"jsonrpc":"2.0","id":"#.utf8
        (id?.json ?? .null).serialize(into: &bytes)
        bytes += UnsafeBufferPointer(start: member.utf8Start, count: member.utf8CodeUnitCount)
        body(&bytes)
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// `{"jsonrpc":"2.0","method":M,"params":P}` (no params member when `params` is nil).
    public static func notification(method: String, params: JSON?) -> [UInt8] {
        message(method: method, params: params) { _ in }
    }

    /// `{"jsonrpc":"2.0","method":M,"params":P,"id":ID}`.
    public static func request(method: String, params: JSON?, id: RequestID) -> [UInt8] {
        message(method: method, params: params) { bytes in
            bytes += #","id":"#.utf8
            id.json.serialize(into: &bytes)
        }
    }

    /// A request or notification written straight into one buffer: the envelope, the method, the params, then what
    /// `tail` appends.
    private static func message(method: String, params: JSON?, _ tail: (inout [UInt8]) -> Void) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        bytes += #"{"jsonrpc":"2.0","method":"#.utf8
        JSON.string(method).serialize(into: &bytes)
        if let params {
            bytes += #","params":"#.utf8
            params.serialize(into: &bytes)
        }
        tail(&bytes)
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// A batch response: the already encoded responses joined into one array.
    public static func batch(_ responses: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        for (index, response) in responses.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += response
        }
        bytes.append(UInt8(ascii: "]"))
        return bytes
    }
}
