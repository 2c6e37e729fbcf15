import JSON

/// Writer-side state of a ``Connection``; all access under `Connection.state`.
struct WriterState: ~Copyable {
    var outbound = OutboundQueue()
    var lastWriteProgress: UInt64 = 0
    var framing: Framing = .undetermined
    /// Set while the reader dispatches one read's messages, so their answers go out in one write.
    var corked = false
    var writeFailed = false
    /// Set before the loop closes the fds; nothing touches them afterwards.
    var detached = false
    var readDone = false
    /// The reader holds input it has not fed yet (output over the high-water mark).
    var inputHeld = false
    /// A wake-up to feed the held input was asked for and not yet served.
    var resumeRequested = false
    var closing = false
    var drainDeadline: UInt64 = 0
    var flushGrace: UInt64 = 0
    /// Requests from the peer awaiting an answer, oldest first (a duplicate id is answered in order).
    /// A short array: in-flight requests are few and capped.
    var pending: [PendingRequest] = []
    var inFlight = 0
    var outgoing: [RequestID: OutgoingRequest] = [:]
    var nextOutgoingID = 0
}

/// A request from the peer awaiting its answer, and the batch it belongs to.
struct PendingRequest {
    let id: RequestID
    let batch: Batch?
}

/// Collects the answers of one batch until every request in it has been answered.
/// Mutated only under the owning connection's lock.
final class Batch: @unchecked Sendable {
    var remaining = 0
    var sealed = false
    /// The answers so far, packed as the elements of the batch's array (`[` and commas included).
    private var answers = OutboundQueue()

    /// Bytes of the answers collected so far (they count against the output high-water mark).
    var bytes: Int { answers.count }

    func append(_ response: [UInt8]) {
        answers.pack(answers.isEmpty ? [UInt8(ascii: "[")] : [UInt8(ascii: ",")])
        answers.pack(response)
    }

    /// The collected answers, handed over once when the batch is sent.
    func takeAnswers() -> OutboundQueue {
        defer { answers = OutboundQueue() }
        return answers
    }
}

/// A daemon→host request awaiting its answer.
struct OutgoingRequest: Sendable {
    let deadline: UInt64
    let completion: @Sendable (Result<JSON, RequestFailure>) -> Void
}

/// How a daemon→host request ended without a result.
public enum RequestFailure: Error, Sendable, Hashable {
    /// The peer answered with this error object.
    case peer(ErrorObject)
    /// The peer did not answer within the timeout.
    case timedOut
    /// The connection closed before an answer came.
    case connectionClosed

    /// An error object describing the failure: the peer's own, or -32001 / -32000 for the connection's.
    public var errorObject: ErrorObject {
        switch self {
        case .peer(let error): return error
        case .timedOut:
            return ErrorObject(code: .requestTimedOut, message: "Request timed out", data: ["reason": "the host did not answer in time"])
        case .connectionClosed:
            return ErrorObject(code: .connectionClosed, message: "Connection closed", data: ["reason": "the connection closed"])
        }
    }
}
