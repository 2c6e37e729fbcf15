import AccessEnabler
import FoundationEssentials
import JSON
import JSONRPC
import Synchronization

/// What every connection's engine starts from (`passbridge --help`): backend URL, software statement,
/// redirect and activation URLs from the flags; the daemon's one `TokenStore`, shared by all connections.
public struct BridgeConfiguration: Sendable {
    /// The engine settings before a connection's `init` params override `softwareStatement`, `redirectURL`
    /// and `webView`.
    public var engine: AccessEnablerConfiguration
    /// The persistent store all instances share (ARCHITECTURE.md "The store").
    public var store: TokenStore

    public init(engine: AccessEnablerConfiguration, store: TokenStore) {
        self.engine = engine
        self.store = store
    }
}

/// The JSON-RPC handler of the daemon: one `ApplicationInstance` (one `AccessEnabler`) per connection.
///
/// Give the same instance to the stdio and socket servers; it keys sessions by connection. Thread-safe.
public final class BridgeService: RPCHandler {
    let configuration: BridgeConfiguration
    let factory: EngineFactory
    let statistics = BridgeStatistics()

    /// Open sessions by connection; all access under the mutex. A closed session leaves the table at once
    /// (its running calls keep it alive until they are answered).
    private let sessions = Mutex<[ObjectIdentifier: ApplicationInstance]>([:])

    /// - Parameter engineFactory: builds each connection's engine; default `Engine` on `configuration.store`.
    public init(configuration: BridgeConfiguration, engineFactory: EngineFactory? = nil) {
        self.configuration = configuration
        let store = configuration.store
        self.factory =
            engineFactory ?? { engineConfiguration, delegate in
                Engine(configuration: engineConfiguration, store: store, delegate: delegate)
            }
    }

    // MARK: RPCHandler

    public func handle(method: String, params: JSON?, id: RequestID?, on connection: Connection) {
        handle(method: method, params: params, id: id, from: connection)
    }

    public func connectionClosed(_ connection: Connection) {
        closed(connection)
    }

    // MARK: transport-neutral entry points (also used by tests)

    /// Handles one request (`id` non-nil) or notification from `outbound`'s peer; answers are written to
    /// `outbound`. Call from one thread per connection, in arrival order.
    public func handle(method: String, params: JSON?, id: RequestID?, from outbound: any Outbound) {
        let key = ObjectIdentifier(outbound)
        let session = sessions.withLock { sessions in
            if let session = sessions[key] { return session }
            let session = ApplicationInstance(outbound: outbound, configuration: configuration, factory: factory, statistics: statistics)
            sessions[key] = session
            statistics.connections.add(1, ordering: .relaxed)
            return session
        }
        session.handle(method: method, params: params, id: id)
    }

    /// The peer of `outbound` went away (or the daemon is draining): cancels that instance's flows only.
    public func closed(_ outbound: any Outbound) {
        guard let session = sessions.withLock({ $0.removeValue(forKey: ObjectIdentifier(outbound)) }) else { return }
        statistics.connections.subtract(1, ordering: .relaxed)
        session.close()
    }

    /// Connections with a session.
    public var sessionCount: Int { sessions.withLock { $0.count } }
}

/// Builds one engine per connection from the connection's configuration and its delegate.
public typealias EngineFactory = @Sendable (AccessEnablerConfiguration, EntitlementDelegate) -> any AccessEnabler
