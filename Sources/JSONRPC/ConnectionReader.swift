import Glibc
import JSON

/// The reading side of a ``Connection``, on its loop's thread: reads, frames, dispatches, and holds input back
/// while the output is over the high-water mark.
extension Connection {
    /// Reads once and dispatches the whole messages in what arrived until the output passes the high-water
    /// mark, holding the rest; at end of input, begins closing. Returns false when there was nothing to read
    /// (`EAGAIN`, `EINTR`), true otherwise.
    @discardableResult
    func readable(buffer: UnsafeMutableRawBufferPointer) -> Bool {
        loop.thread.check("connection \(number) reader")
        if !held.isEmpty {
            // Reading is paused, so only a hang-up gets here: a socket peer that is fully gone, or a pipe
            // whose writer closed (read again once the held input is used).
            if isSocket {
                state.withLock { $0.writeFailed = true }
            } else {
                inputHungUp = true
                state.withLock { _ in loop.removeInterest(self, fd: readFD, direction: 0) }
            }
            return true
        }
        let count = read(readFD, buffer.baseAddress, buffer.count)
        if count < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return false }
            log.debug("connection \(number): read failed: \(errnoString())")
            state.withLock { $0.writeFailed = true }
            beginClosing()
            return true
        }
        if count == 0 {
            log.debug("connection \(number): end of input")
            corked { framer.finish(handle) }
            beginClosing()
            return true
        }
        let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
        state.withLock { state in
            if state.framing == .undetermined { state.framing = Framer.detect(chunk) }
        }
        let consumed = corked { framer.feed(chunk, pausing: { overBudget }, handle) }
        if consumed < count {
            held = Array(chunk[consumed...])
            state.withLock { state in
                state.inputHeld = true
                updateInterestLocked(&state)
            }
        }
        return true
    }

    /// Feeds held input once the output is under the high-water mark again (loop thread); when all of it is
    /// used, reading resumes.
    func resumeHeldInput(buffer: UnsafeMutableRawBufferPointer) {
        loop.thread.check("connection \(number) reader")
        guard !held.isEmpty else { return }
        let ready = state.withLock { state -> Bool in
            state.resumeRequested = false
            return !state.readDone && state.outbound.count < limits.outboundHighWater
        }
        guard ready else { return }
        overBudget = false
        let input = held
        let consumed = input.withUnsafeBytes { bytes in corked { framer.feed(bytes, pausing: { overBudget }, handle) } }
        held.removeFirst(consumed)
        guard held.isEmpty else { return }
        state.withLock { state in
            state.inputHeld = false
            // A wake-up an engine thread asked for while the held input was fed is served with it. Left standing,
            // it kept the next pause from asking for one, and the connection never read again.
            state.resumeRequested = false
            updateInterestLocked(&state)
        }
        // A hung-up pipe is no longer polled, so what is left in it is read now, to the end of input, or until
        // the output passes the mark again (the rest waits for the next resume). Stopping after one read left
        // the end of input unread whenever that read's messages kept the output under the mark.
        while inputHungUp && held.isEmpty && !state.withLock({ $0.readDone }) {
            if !readable(buffer: buffer) {
                // Empty but not ended: a writer opened the pipe (a FIFO) again, so it is polled again.
                inputHungUp = false
                state.withLock { state in
                    loop.watchAgain(self, fd: readFD)
                    updateInterestLocked(&state)
                }
            }
        }
    }

    /// Runs `work` with writes held back, then flushes what it queued in one write.
    func corked<T>(_ work: () -> T) -> T {
        state.withLock { $0.corked = true }
        let result = work()
        state.withLock { state in
            state.corked = false
            flushLocked(&state)
        }
        return result
    }

    func handle(_ event: FrameEvent) {
        defer {
            overBudget = state.withLock { $0.outbound.count >= limits.outboundHighWater }
        }
        switch event {
        case .message(let body): dispatch(body)
        case .tooLarge(let declared):
            log.warning(
                "connection \(number): message over \(limits.maxMessageBytes) bytes refused"
                    + (declared.map { " (Content-Length \($0))" } ?? ""))
            send(OutgoingMessage.response(id: nil, error: .messageTooLarge(limit: limits.maxMessageBytes)))
        case .unreadable(let reason):
            log.warning("connection \(number): unreadable header block (\(reason)), skipping to the next Content-Length")
            send(
                OutgoingMessage.response(
                    id: nil, error: ErrorObject(code: .parseError, message: "Parse error", data: ["reason": .string(reason)])))
        case .cutShort(let reason):
            log.warning("connection \(number): \(reason)")
            send(
                OutgoingMessage.response(
                    id: nil, error: ErrorObject(code: .parseError, message: "Parse error", data: ["reason": .string(reason)])))
        }
    }

    func send(_ body: [UInt8]) {
        state.withLock { state in enqueueLocked(&state, body) }
    }

    /// Parses one message and acts on it. Text that is not JSON is answered -32700 `{reason, offset}`; valid JSON
    /// that the parser refuses (a repeated member name, U+0000 in a member name) -32600 `{reason}`, the reason
    /// naming the member; both with `id` null, and a batch holding such an object is refused whole. An array goes
    /// to ``dispatchBatch(_:)``; anything else is a request, notification or response (Protocol/README.md
    /// "Errors").
    func dispatch(_ body: UnsafeRawBufferPointer) {
        let json: JSON
        do {
            json = try JSON.parse(body)
        } catch {
            log.debug("connection \(number): \(error.kind == .invalidText ? "parse error" : "refused"): \(error)")
            send(OutgoingMessage.response(id: nil, error: .parseFailure(error)))
            return
        }
        if case .array(let elements) = json {
            dispatchBatch(elements)
            return
        }
        switch IncomingMessage(json) {
        case .request(let method, let params, let id):
            if let id {
                guard register(id, batch: nil) else {
                    send(OutgoingMessage.response(id: id, error: .overloaded(inFlightLimit: limits.maxInFlightRequests)))
                    return
                }
            }
            handler?.handle(method: method, params: params, id: id, on: self)
        case .response(let id, let result):
            complete(id, result)
        case .invalid(let id, let error):
            send(OutgoingMessage.response(id: id, error: error))
        case .unusableResponse(let id, let reason):
            unusable(id, reason)
        case .neitherRequestNorResponse(let id):
            if !unusable(id, "neither a result nor an error") {
                send(OutgoingMessage.response(id: id, error: .invalidRequest("no method")))
            }
        }
    }

    func dispatchBatch(_ elements: [JSON]) {
        guard !elements.isEmpty else {
            send(OutgoingMessage.response(id: nil, error: .invalidRequest("empty batch")))
            return
        }
        guard elements.count <= limits.maxBatchSize else {
            send(OutgoingMessage.response(id: nil, error: .invalidRequest("batch over \(limits.maxBatchSize) elements")))
            return
        }
        let batch = Batch()
        var calls: [(method: String, params: JSON?, id: RequestID?)] = []
        for element in elements {
            switch IncomingMessage(element) {
            case .request(let method, let params, let id):
                if let id {
                    guard register(id, batch: batch) else {
                        let refused = OutgoingMessage.response(id: id, error: .overloaded(inFlightLimit: limits.maxInFlightRequests))
                        state.withLock { _ in batch.append(refused) }
                        continue
                    }
                }
                calls.append((method, params, id))
            case .response(let id, let result):
                complete(id, result)
            case .invalid(let id, let error):
                let answer = OutgoingMessage.response(id: id, error: error)
                state.withLock { _ in batch.append(answer) }
            case .unusableResponse(let id, let reason):
                unusable(id, reason)
            case .neitherRequestNorResponse(let id):
                if !unusable(id, "neither a result nor an error") {
                    let answer = OutgoingMessage.response(id: id, error: .invalidRequest("no method"))
                    state.withLock { _ in batch.append(answer) }
                }
            }
        }
        for (position, call) in calls.enumerated() {
            let overMark = state.withLock { state in
                state.outbound.count + batch.bytes >= limits.outboundHighWater
            }
            if overMark {
                // The batch's answers are sent as one message: past the mark, the rest is refused, not held.
                log.warning(
                    "connection \(number): batch answers over \(limits.outboundHighWater) bytes; \(calls.count - position) requests refused"
                )
                for refused in calls[position...] {
                    if let id = refused.id { respond(to: id, error: .outputOverLimit(limit: limits.outboundHighWater)) }
                }
                break
            }
            handler?.handle(method: call.method, params: call.params, id: call.id, on: self)
        }
        state.withLock { state in
            batch.sealed = true
            if batch.remaining == 0 && batch.bytes > 0 {
                enqueueBatchLocked(&state, batch)
            }
        }
    }

    /// Records that `id` awaits an answer; false when the in-flight cap is reached.
    func register(_ id: RequestID, batch: Batch?) -> Bool {
        state.withLock { state in
            guard state.inFlight < limits.maxInFlightRequests else { return false }
            state.inFlight += 1
            state.pending.append(PendingRequest(id: id, batch: batch))
            if let batch { batch.remaining += 1 }
            return true
        }
    }

    /// A response that is not a valid one: the request it names, if this side is waiting for it, ends as an error
    /// (Protocol/README.md, "Partner single sign-on"); else it is dropped. Never answered. Whether it named one.
    @discardableResult
    func unusable(_ id: RequestID?, _ reason: String) -> Bool {
        guard let id, state.withLock({ $0.outgoing[id] != nil }) else {
            log.debug("connection \(number): unusable response (\(reason)), dropped")
            return false
        }
        log.warning("connection \(number): the answer to \(id) is no valid response (\(reason)); taken as an error")
        complete(id, .failure(.invalidRequest("no valid response: \(reason)")))
        return true
    }

    func complete(_ id: RequestID, _ result: Result<JSON, ErrorObject>) {
        let request = state.withLock { $0.outgoing.removeValue(forKey: id) }
        guard let request else {
            log.debug("connection \(number): response to unknown request \(id), dropped")
            return
        }
        request.completion(result.mapError { .peer($0) })
    }
}
