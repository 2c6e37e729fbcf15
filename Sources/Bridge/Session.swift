import AccessEnabler
import JSON
import JSONRPC
import Synchronization

/// One connection's application instance: its engine and the per-connection rules of DESIGN §3
/// (lazy `init {}`, -32002 before setRequestor, call order, cancel on close).
///
/// `handle` runs on the connection's reader thread, one message at a time. Engine calls start on
/// `Task.immediate`, so each call enters the engine before the next message is read: calls reach the engine in
/// the order the host sent them (the engine queues them behind setRequestor itself).
final class Session: Sendable {
    let outbound: any Outbound
    let configuration: BridgeConfiguration
    let factory: EngineFactory

    /// All access under the mutex.
    private struct State {
        var engine: (any EngineAPI)?
        /// A valid setRequestor was received on this instance.
        var requestorSent = false
        var closed = false
        /// The calls waiting for setRequestor; after close, nothing starts.
        var queue = SetRequestorQueue<QueuedCall>()
        /// The current engine's delegate.
        var adapter: DelegateAdapter?
        /// The reasons (`statuses`) of the last setRequestor when it failed; nil after one succeeded.
        var setRequestorFailure: [JSON]?
    }
    private let state = Mutex(State())

    let statistics: BridgeStatistics

    init(outbound: any Outbound, configuration: BridgeConfiguration, factory: @escaping EngineFactory, statistics: BridgeStatistics) {
        self.outbound = outbound
        self.configuration = configuration
        self.factory = factory
        self.statistics = statistics
    }

    /// An engine call accepted but not answered yet.
    struct QueuedCall: Sendable {
        let id: RequestID?
        let start: @Sendable () -> Void
    }

    // MARK: dispatch

    /// Validates and starts one request (`id` non-nil) or host notification (`id` nil; never answered).
    func handle(method: String, params: JSON?, id: RequestID?) {
        guard let spec = MethodTable.byName[method] else {
            if let id { outbound.respond(to: id, error: .methodNotFound(method)) }
            return
        }
        let operation: Operation
        let request: AnsweredRequest
        do throws(ErrorObject) {
            let params = try Params(params)
            try ParamNames.refuseUnknown(params, method: method)
            if spec.needsRequestor && !state.withLock({ $0.requestorSent }) {
                throw ErrorObject.requestorNotSet()
            }
            request = AnsweredRequest(method: method, params: params)
            operation = try spec.prepare(self, params)
        } catch {
            if let id { outbound.respond(to: id, error: error) }
            return
        }
        switch operation {
        case .now(let result):
            if let id { outbound.respond(to: id, result: result) }
        case .nowEncoded(let bytes):
            if let id { outbound.respond(to: id, encodedResult: bytes) }
        case .engine(let run):
            let engine = self.engine()
            let isSetRequestor = method == LifecycleMethods.setRequestor.name
            let start: @Sendable () -> Void = { [self] in
                Task.immediate {
                    let collector = OutcomeStatuses()
                    var result: Result<JSON, ErrorObject> = await OutcomeStatuses.$current.withValue(collector) {
                        do throws(ErrorObject) { return .success(try await run(engine)) } catch { return .failure(error) }
                    }
                    statistics.callsInFlight.subtract(1, ordering: .relaxed)
                    if case .success(let value) = result {
                        result = .success(explain(value, of: request, statuses: collector.statuses))
                    }
                    if let id {
                        switch result {
                        case .success(let value): outbound.respond(to: id, result: value)
                        case .failure(let error): outbound.respond(to: id, error: error)
                        }
                    }
                    if isSetRequestor { perform(state.withLock { $0.queue.receive(.setRequestorAnswered) }) }
                }
            }
            let call = QueuedCall(id: id, start: start)
            statistics.callsInFlight.add(1, ordering: .relaxed)
            let event: SetRequestorQueue<QueuedCall>.Event =
                isSetRequestor ? .setRequestor(call) : .call(call, waits: spec.waitsForSetRequestor)
            perform(state.withLock { $0.queue.receive(event) })
        }
    }

    /// Runs the queue's actions, outside the lock: a dropped call is answered -32003 and never runs.
    private func perform(_ actions: [SetRequestorQueue<QueuedCall>.Action]) {
        for action in actions {
            switch action {
            case .start(let call):
                call.start()
            case .drop(let call):
                statistics.callsInFlight.subtract(1, ordering: .relaxed)
                if let id = call.id { outbound.respond(to: id, error: .shuttingDown()) }
            }
        }
    }

    // MARK: engine instance

    /// This connection's engine, created with `init {}` defaults on first use.
    func engine() -> any EngineAPI {
        if let engine = state.withLock({ $0.engine }) { return engine }
        let (engine, adapter) = makeEngine(softwareStatement: nil, redirectURL: nil, webView: nil)
        return state.withLock { state in
            if let existing = state.engine { return existing }
            state.engine = engine
            state.adapter = adapter
            return engine
        }
    }

    /// `init`: a fresh engine with these settings replaces any earlier one (whose flows are cancelled);
    /// the new instance has no requestor yet.
    func initialize(softwareStatement: String?, redirectURL: String?, webView: Bool?, partnerSSO: String? = nil, device: HostedDevice? = nil) {
        let (engine, adapter) = makeEngine(
            softwareStatement: softwareStatement, redirectURL: redirectURL, webView: webView, partnerSSO: partnerSSO, device: device)
        let previous = state.withLock { state in
            defer {
                state.engine = engine
                state.adapter = adapter
                state.requestorSent = false
                state.setRequestorFailure = nil
            }
            return state.engine
        }
        if let previous { Task { await previous.cancel() } }
    }

    /// `partnerSSO`: the partner the host answers for; only then (and only over a connection that can carry
    /// daemon→host requests) does the engine get a `PartnerSSOHost`.
    private func makeEngine(
        softwareStatement: String?, redirectURL: String?, webView: Bool?, partnerSSO: String? = nil, device: HostedDevice? = nil
    ) -> (any EngineAPI, DelegateAdapter) {
        var engineConfiguration = configuration.engine
        if let device {
            engineConfiguration.deviceID = device.identifier
            engineConfiguration.deviceInfo = device.info
            engineConfiguration.forwardedFor = device.address
        }
        if let softwareStatement { engineConfiguration.softwareStatement = softwareStatement }
        if let redirectURL { engineConfiguration.redirectURL = redirectURL }
        if let webView { engineConfiguration.webView = webView }
        let adapter = DelegateAdapter(outbound: outbound)
        engineConfiguration.partnerSSO = nil
        if let partnerSSO, let requester = outbound as? any HostRequester {
            engineConfiguration.partnerSSO = PartnerSSOHost(partner: partnerSSO, requester: requester)
        }
        return (factory(engineConfiguration, adapter), adapter)
    }

    /// Records that a valid setRequestor was received (calls after it no longer get -32002).
    func markRequestorSent() { state.withLock { $0.requestorSent = true } }

    /// The reasons of the last setRequestor when it failed (nil after one succeeded, or before any ended).
    var setRequestorFailure: [JSON]? {
        get { state.withLock { $0.setRequestorFailure } }
        set { state.withLock { $0.setRequestorFailure = newValue } }
    }

    /// The MVPD ids of the current engine's last provider dialog.
    var offeredMVPDs: [String] { state.withLock { $0.adapter }?.offeredMVPDs.withLock { $0 } ?? [] }

    // MARK: lifecycle

    /// The connection closed (or the daemon is draining): calls waiting for setRequestor are answered -32003
    /// without running, flows waiting on the host end with their cancel outcome, and nothing starts afterwards
    /// (the engine's cancel is sticky); backend calls in progress finish and are answered where the peer is
    /// still there (the transport answers what is left after its shutdown timeout with -32003).
    func close() {
        let (engine, dropped) = state.withLock { state -> ((any EngineAPI)?, [SetRequestorQueue<QueuedCall>.Action]) in
            if state.closed { return (nil, []) }
            state.closed = true
            return (state.engine, state.queue.receive(.close))
        }
        perform(dropped)
        if let engine { Task { await engine.cancel() } }
    }
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
