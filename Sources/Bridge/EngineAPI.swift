import AccessEnabler
import FoundationEssentials
import JSON

/// The AccessEnabler calls the bridge makes (its public API); `AccessEnabler` conforms.
///
/// A seam so unit tests can drive the bridge with a scripted engine.
public protocol EngineAPI: Sendable {
    func setOptions(_ options: JSONObject)
    /// `answered` runs before any call waiting for this setRequestor goes on: the bridge writes its response there.
    func setRequestor(_ requestorID: String, serviceProviders: [URL]?, answered: @Sendable (Int32) -> Void) async -> Int32
    func checkAuthentication() async -> AuthenticationStatus
    func getAuthentication(forceAuthn: Bool, data: JSONObject?, filter: ProviderFilter?) async -> AuthenticationStatus
    func setSelectedProvider(_ mvpdId: String?) async -> SelectionOutcome
    func handleExternalURL(_ url: String) async throws(AccessEnablerError) -> AuthenticationStatus
    func getAuthenticationToken() async -> AuthenticationStatus
    func checkPreauthorizedResources(_ resources: [String], cache: Bool) async -> [String]
    func checkAuthorization(_ resource: String, data: JSONObject?) async -> AuthorizationOutcome
    func getAuthorization(_ resource: String, data: JSONObject?) async -> AuthorizationOutcome
    func logout() async -> AuthenticationStatus
    func getSelectedProvider() -> MVPD?
    func getMetadata(_ request: MetadataRequest, arguments: JSON) async -> MetadataStatus
    func cancel() async
}

extension AccessEnabler: EngineAPI {}

/// Builds one engine per connection from the connection's configuration and its delegate.
public typealias EngineFactory = @Sendable (AccessEnablerConfiguration, EntitlementDelegate) -> any EngineAPI
