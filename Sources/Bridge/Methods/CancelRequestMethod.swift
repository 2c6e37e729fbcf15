import JSON
import JSONRPC

/// `$/cancelRequest {id}` (the Language Server Protocol's convention): cancels the engine call answering request
/// `id` of this connection (`ApplicationInstance.cancel(request:)`); usually sent as a notification, and answered
/// `{}` when sent as a request. Never queued, no requestor needed (Protocol/README.md, "Cancelling a request").
enum CancelRequestMethod {
    static let name = "$/cancelRequest"

    static let spec = MethodSpec(name: name, needsRequestor: false) { instance, params throws(ErrorObject) in
        guard let id = params.object["id"] else { throw Params.invalid("id", "is required: the id of the request to cancel") }
        switch id {
        case .string, .integer, .bigInteger, .double: break
        default: throw Params.invalid("id", "must be a string or a number, not \(id.typeName)")
        }
        instance.cancel(request: RequestID(json: id))
        return .now(.object([:]))
    }
}
