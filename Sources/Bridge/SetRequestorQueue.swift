/// The one queue of an instance's calls that wait for setRequestor (`Protocol/README.md`, Lifecycle 3 and 5),
/// as a value: `receive` takes an event and returns what to do; `Session` performs the actions.
///
/// | state \ event        | setRequestor               | waiting call   | other call | setRequestor answered           | close              |
/// |----------------------|----------------------------|----------------|------------|---------------------------------|--------------------|
/// | ready                | start; configuring(1)      | start          | start      | (none)                          | closed             |
/// | configuring(n)       | start; configuring(n + 1)  | hold           | start      | n = 1: start held, ready; else configuring(n - 1) | drop held; closed |
/// | closed               | drop                       | drop           | drop       | (none)                          | (none)             |
///
/// "Start" runs a call now; "drop" answers it -32003 without running it: after close nothing starts (cancel is
/// sticky). Held calls start in arrival order, after the last setRequestor in flight was answered.
struct SetRequestorQueue<Call> {
    enum State: Equatable {
        case ready
        /// `setRequestors` calls of setRequestor are in flight.
        case configuring(setRequestors: Int)
        case closed
    }

    enum Event {
        case setRequestor(Call)
        /// Any other call; `waits` when it is one of `MethodSpec.queuedBehindSetRequestor`.
        case call(Call, waits: Bool)
        case setRequestorAnswered
        case close
    }

    enum Action {
        case start(Call)
        case drop(Call)
    }

    private(set) var state = State.ready
    /// Calls held while configuring, in arrival order.
    private(set) var held: [Call] = []

    mutating func receive(_ event: Event) -> [Action] {
        switch (state, event) {
        case (.closed, .setRequestor(let call)), (.closed, .call(let call, _)):
            return [.drop(call)]
        case (.closed, .setRequestorAnswered), (.closed, .close), (.ready, .setRequestorAnswered):
            return []
        case (.ready, .setRequestor(let call)):
            state = .configuring(setRequestors: 1)
            return [.start(call)]
        case (.configuring(let n), .setRequestor(let call)):
            state = .configuring(setRequestors: n + 1)
            return [.start(call)]
        case (.ready, .call(let call, _)), (.configuring, .call(let call, waits: false)):
            return [.start(call)]
        case (.configuring, .call(let call, waits: true)):
            held.append(call)
            return []
        case (.configuring(let n), .setRequestorAnswered):
            guard n == 1 else {
                state = .configuring(setRequestors: n - 1)
                return []
            }
            state = .ready
            defer { held = [] }
            return held.map { .start($0) }
        case (.ready, .close), (.configuring, .close):
            state = .closed
            defer { held = [] }
            return held.map { .drop($0) }
        }
    }
}

extension SetRequestorQueue: Sendable where Call: Sendable {}
extension SetRequestorQueue.Event: Sendable where Call: Sendable {}
extension SetRequestorQueue.Action: Sendable where Call: Sendable {}
