import JSON
import JSONRPC

/// Where an application instance writes: responses and notifications, in call order (Protocol/README.md).
///
/// `JSONRPC.Connection` is the real one; unit tests record into a list.
public protocol Outbound: AnyObject, Sendable {
    func respond(to id: RequestID, result: JSON)
    func respond(to id: RequestID, error: ErrorObject)
    /// Answers with a result that is already compact JSON text.
    func respond(to id: RequestID, encodedResult: [UInt8])
    func notify(method: String, params: JSON)
}

extension Outbound {
    /// Parses the text and answers with the value (for recorders; `Connection` copies the bytes).
    public func respond(to id: RequestID, encodedResult: [UInt8]) {
        do { respond(to: id, result: try JSON.parse(encodedResult)) } catch {
            respond(to: id, error: .internalError("unreadable encoded result"))
        }
    }
}

extension Connection: Outbound {}
