import JSON
import JSONRPC

/// Where a session writes: responses and notifications, in call order (DESIGN §3 ordering rules).
///
/// `JSONRPC.Connection` is the real one; unit tests record into a list.
public protocol Outbound: AnyObject, Sendable {
    func respond(to id: RequestID, result: JSON)
    func respond(to id: RequestID, error: ErrorObject)
    func notify(method: String, params: JSON)
}

extension Connection: Outbound {}
