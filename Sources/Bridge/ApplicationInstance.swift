import AccessEnabler
import JSON
import JSONRPC
import Synchronization

/// One connection's application instance, and that connection's `RPCHandler`: its engine and the
/// per-connection rules of Protocol/README.md (lazy `init {}`, -32002 before setRequestor, call order, cancel on
/// close). The transport's factory makes one when the peer connects (`Daemon.run`).
///
/// `handle` runs on the connection's reader thread, one message at a time. Engine calls start on
/// `Task.immediate`, and the engine runs on this connection's event loop (its serial executor), so each call's
/// first job is queued on the loop before the next message is read: calls reach the engine in the order the host
/// sent them. The engine alone holds the calls that wait for setRequestor
/// (`AccessEnabler.WaitingCall`, `Sources/AccessEnabler/README.md`); setRequestor's response is written from its
/// `answered` hook, before any of them goes on.
final class ApplicationInstance: RPCHandler {
    let outbound: any Outbound
    let configuration: BridgeConfiguration
    let factory: EngineFactory

    /// All access under the mutex. Whether a requestor was set and whether the instance is closed are the
    /// engine's lifecycle, asked on the loop (`AccessEnabler.admit`).
    private struct State {
        var engine: (any AccessEnabler)?
        /// The engine's delegate, detached when a later `init` replaces the engine.
        var delegate: DelegateAdapter?
        /// The engine calls not yet ended, by request id (every one of an id the host sent for several), for
        /// `$/cancelRequest` and for a later `init`.
        var calls: [RequestID: [Answer]] = [:]
        /// An `init` replaced an instance that had been sent a `setRequestor`: -32002 then says so.
        var replacedConfigured = false

        /// The call `answer` of request `id` ended.
        mutating func ended(_ answer: Answer, _ id: RequestID) {
            calls[id]?.removeAll { $0 === answer }
            if calls[id]?.isEmpty == true { calls[id] = nil }
        }
    }
    private let state = Mutex(State())

    /// The daemon's counters, shared by every instance.
    let statistics: BridgeStatistics
    /// This instance in `statistics.connections`: not yet (0), from its first message (1) until it closes (2).
    private let counted = Atomic<Int>(0)

    /// - Parameter engineFactory: builds the engine; by default an `Engine` on `configuration.store`.
    init(outbound: any Outbound, configuration: BridgeConfiguration, statistics: BridgeStatistics, engineFactory: EngineFactory? = nil) {
        self.outbound = outbound
        self.configuration = configuration
        self.statistics = statistics
        let store = configuration.store
        self.factory =
            engineFactory ?? { engineConfiguration, delegate in
                Engine(configuration: engineConfiguration, store: store, delegate: delegate)
            }
    }

    // MARK: RPCHandler

    /// `connection` is the instance's own `outbound`.
    func handle(method: String, params: JSON?, id: RequestID?, on connection: Connection) {
        connection.checkReaderThread("ApplicationInstance.handle")
        handle(method: method, params: params, id: id)
    }

    func connectionClosed(_ connection: Connection) { close() }

    // MARK: dispatch

    /// Validates and starts one request (`id` non-nil) or host notification (`id` nil; never answered). Call
    /// from one thread, in arrival order.
    func handle(method: String, params: JSON?, id: RequestID?) {
        if counted.compareExchange(expected: 0, desired: 1, ordering: .relaxed).exchanged {
            statistics.connections.add(1, ordering: .relaxed)
        }
        guard let spec = MethodTable.byName[method] else {
            refuse(id, method, .methodNotFound(method))
            return
        }
        let operation: Operation
        do throws(ErrorObject) {
            let params = try Params(params)
            try ParamNames.refuseUnknown(params, method: method)
            // The params first: a malformed call is -32602 with or without a requestor (Protocol/README.md,
            // Lifecycle 3). `prepare` only validates for such methods; their work runs later, from `.engine`.
            operation = try spec.prepare(self, params)
            if spec.needsRequestor, engine().admit(.needsRequestor) == .requestorNotSet {
                throw ErrorObject.requestorNotSet(afterInit: state.withLock { $0.replacedConfigured })
            }
        } catch {
            refuse(id, method, error)
            return
        }
        switch operation {
        case .now(let result):
            if let id { outbound.respond(to: id, result: result) }
        case .nowEncoded(let bytes):
            if let id { outbound.respond(to: id, encodedResult: bytes) }
        case .engine(let run):
            start(method, id: id) { engine, answer in
                do throws(ErrorObject) { answer(.success(try await run(engine))) } catch { answer(.failure(error)) }
            }
        case .engineAnsweringEarly(let run):
            start(method, id: id) { engine, answer in await run(engine) { answer(.success($0)) } }
        }
    }

    /// Answers a refused request with `error`. A refused notification has no one to answer: the first
    /// `loggedNotifications` of the connection are logged at warning, or the host's mistake (a method misspelt, a
    /// param missing) would leave no trace; the Language Server Protocol's `$/` ones, which a server may ignore, are not.
    private func refuse(_ id: RequestID?, _ method: String, _ error: ErrorObject) {
        if let id { return outbound.respond(to: id, error: error) }
        guard !method.hasPrefix("$/") else { return }
        let count = refusedNotifications.add(1, ordering: .relaxed).newValue
        guard count <= Self.loggedNotifications else { return }
        let connection = (outbound as? Connection).map { "connection \($0.number): " } ?? ""
        let more = count == Self.loggedNotifications ? " (later ones of this connection are not logged)" : ""
        Logger(label: "jsonrpc").warning(
            "\(connection)notification \(Text.excerpt(method)) not run (a notification is never answered): \(error.message)\(more)")
    }

    /// How many refused notifications of a connection are logged: a peer sending them in a loop fills no log.
    static let loggedNotifications = 10
    private let refusedNotifications = Atomic<Int>(0)

    /// Runs one engine call; `answer` responds to `id` (the first time it is called), with -32800 instead once
    /// the call was cancelled (`cancel(request:)`).
    private func start(
        _ method: String, id: RequestID?,
        _ body: @escaping @Sendable (any AccessEnabler, _ answer: @escaping @Sendable (Result<JSON, ErrorObject>) -> Void) async -> Void
    ) {
        let engine = self.engine()
        // setRequestor starts the configuration here, on the loop, in the order the host sent it.
        guard engine.admit(method == LifecycleMethods.setRequestor.name ? .setRequestor : .other) == .admitted else {
            if let id { outbound.respond(to: id, error: .shuttingDown()) }
            return
        }
        statistics.callsInFlight.add(1, ordering: .relaxed)
        let answer = Answer(method: method) { [outbound, statistics] result in
            statistics.callsInFlight.subtract(1, ordering: .relaxed)
            guard let id else { return }
            switch result {
            case .success(let value): outbound.respond(to: id, result: value)
            case .failure(let error): outbound.respond(to: id, error: error)
            }
        }
        if let id { state.withLock { $0.calls[id, default: []].append(answer) } }
        // The whole call runs on the connection's loop: the engine's jobs, and the bridge's code around them.
        let task = Task.immediate(executorPreference: (outbound as? Connection)?.taskExecutor) { [weak self] in
            await body(engine) { answer.send($0) }
            answer.send(.failure(ErrorObject(code: .internalError, message: "Internal error: the call ended without an answer")))
            if let id { self?.state.withLock { $0.ended(answer, id) } }
        }
        answer.run(in: task)
    }

    /// `$/cancelRequest {id}`: the engine calls answering request `id` (one, unless the host reused the id) are
    /// cancelled (their tasks, which the engine reads as the user's cancel wherever a call waits on the host) and
    /// answered -32800 when they end. An id that is not a call of this connection still running is ignored
    /// (Protocol/README.md, "Cancelling a request").
    func cancel(request id: RequestID) {
        for answer in state.withLock({ $0.calls[id] ?? [] }) { answer.cancel() }
    }

    // MARK: engine instance

    /// This connection's engine, created with `init {}` defaults on first use.
    func engine() -> any AccessEnabler {
        if let engine = state.withLock({ $0.engine }) { return engine }
        let (engine, delegate) = makeEngine(InitSettings())
        return state.withLock { state in
            if let existing = state.engine { return existing }
            (state.engine, state.delegate) = (engine, delegate)
            return engine
        }
    }

    /// `init`: a fresh engine with these settings replaces any earlier one: its calls still running are answered
    /// -32003 now, before init's response; it sends nothing more and is closed. The new instance has no requestor
    /// yet.
    func initialize(_ settings: InitSettings) {
        let (engine, delegate) = makeEngine(settings)
        let configured = state.withLock { $0.engine }.map { $0.admit(.needsRequestor) != .requestorNotSet } ?? false
        let previous = state.withLock { state in
            defer { (state.engine, state.delegate, state.calls) = (engine, delegate, [:]) }
            state.replacedConfigured = state.replacedConfigured || configured
            return (state.engine, state.delegate, state.calls.values.joined())
        }
        // Nothing of the replaced instance after init's response: its calls are answered now, it says nothing more.
        previous.1?.detach()
        for answer in previous.2 { answer.send(.failure(Self.replaced)) }
        previous.0?.close()
    }

    /// The answer of a call whose instance a later `init` replaced (Protocol/README.md, "Errors").
    static let replaced = ErrorObject(
        code: .shuttingDown, message: "Instance replaced", data: ["reason": "a later init replaced the instance"])

    /// The engine of `settings` over the daemon's configuration; `partnerSSO`: the partner the host answers for;
    /// only then (and only over a connection that can carry daemon→host requests) does the engine get a
    /// `PartnerSSOHost`.
    private func makeEngine(_ settings: InitSettings) -> (any AccessEnabler, DelegateAdapter) {
        var engineConfiguration = configuration.engine
        engineConfiguration.singleSignOn = settings.singleSignOn
        // The engine runs on the event loop that reads this connection (ARCHITECTURE.md, "Threads").
        if let connection = outbound as? Connection { engineConfiguration.executor = connection.executor }
        if let device = settings.device {
            engineConfiguration.deviceID = device.identifier
            engineConfiguration.deviceInfo = device.info
            engineConfiguration.forwardedFor = device.address
        }
        if let softwareStatement = settings.softwareStatement { engineConfiguration.softwareStatement = softwareStatement }
        if let redirectURL = settings.redirectURL { engineConfiguration.redirectURL = redirectURL }
        if let webView = settings.webView { engineConfiguration.webView = webView }
        if let svcMVPDs = settings.svcMVPDs { engineConfiguration.svcMVPDs = svcMVPDs }
        if let svcRedirectURL = settings.svcRedirectURL { engineConfiguration.svcRedirectURL = svcRedirectURL }
        if let storageCheck = settings.storageCheck { engineConfiguration.storageCheck = storageCheck }
        let adapter = DelegateAdapter(outbound: outbound)
        engineConfiguration.partnerSSO = nil
        if let partnerSSO = settings.partnerSSO, let requester = outbound as? any HostRequester {
            engineConfiguration.partnerSSO = PartnerSSOHost(partner: partnerSSO, requester: requester) { adapter.detached }
        }
        return (factory(engineConfiguration, adapter), adapter)
    }

    // MARK: lifecycle

    /// The connection closed (or the daemon is draining): the engine's cancel (sticky) ends the calls waiting for
    /// setRequestor with their failure outcome without reaching the backend and the flows waiting on the host with
    /// their cancel outcome; nothing starts afterwards. Backend calls in progress finish and are answered where
    /// the peer is still there (the transport answers what is left after its shutdown timeout with -32003).
    /// Called once by the transport (`connectionClosed`); later calls do nothing.
    func close() {
        if counted.exchange(2, ordering: .relaxed) == 1 { statistics.connections.subtract(1, ordering: .relaxed) }
        engine().close()
    }
}

/// What `init` sets (Protocol/README.md, Lifecycle 2); nil members keep the daemon's own settings.
struct InitSettings {
    var softwareStatement: String?
    var redirectURL: String?
    var webView: Bool?
    var partnerSSO: String?
    var device: HostedDevice?
    var singleSignOn = SingleSignOnTokens()
    var svcMVPDs: Set<String>?
    var svcRedirectURL: String?
    var storageCheck: StorageCheck?
}

/// The device a host acts for (`init {deviceIdentifier, deviceInfo?, forwardedFor?}`, server-to-server).
struct HostedDevice: Sendable {
    /// Its stable identifier (`AP-Device-Identifier`); its logins are kept under it.
    var identifier: String
    /// Its `X-Device-Info` (base64 JSON).
    var info: String?
    /// Its address (`X-Forwarded-For`).
    var address: String?
}

/// The response of one engine call, sent once: by the engine's own hook (setRequestor's `answered`) or when
/// the call ends; later sends do nothing. Once cancelled, the response is -32800, whatever the call ends with.
final class Answer: Sendable {
    private let method: String
    private let respond: @Sendable (Result<JSON, ErrorObject>) -> Void
    private let sent = Atomic<Bool>(false)
    private let cancelled = Atomic<Bool>(false)
    /// The task running the call (set right after it starts), for `cancel`.
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(method: String, _ respond: @escaping @Sendable (Result<JSON, ErrorObject>) -> Void) {
        self.method = method
        self.respond = respond
    }

    func run(in task: Task<Void, Never>) {
        let cancelNow = self.task.withLock { current in
            current = task
            return cancelled.load(ordering: .acquiring)
        }
        if cancelNow { task.cancel() }
    }

    func send(_ result: Result<JSON, ErrorObject>) {
        guard !sent.exchange(true, ordering: .acquiringAndReleasing) else { return }
        respond(cancelled.load(ordering: .acquiring) ? .failure(.requestCancelled(method: method)) : result)
    }

    /// The host cancelled the call: an answer not yet sent becomes -32800, and the call's task is cancelled.
    func cancel() {
        guard !sent.load(ordering: .acquiring) else { return }
        let task = self.task.withLock { current in
            cancelled.store(true, ordering: .releasing)
            return current
        }
        task?.cancel()
    }
}
