import AccessEnabler

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

/// Builds a connection's engine from its configuration and its delegate (`Engine` in the daemon, a scripted
/// `AccessEnabler` in the bridge's unit tests).
typealias EngineFactory = @Sendable (AccessEnablerConfiguration, EntitlementDelegate) -> any AccessEnabler
