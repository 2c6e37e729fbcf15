import Foundation
import JSON
import Synchronization

/// The state machine behind `AccessEnabler`; all flow state is isolated to this actor.
actor Engine {
    nonisolated let configuration: AccessEnablerConfiguration
    nonisolated let store: TokenStore
    nonisolated let delegate: EntitlementDelegate
    nonisolated let shared = Mutex(SharedState())

    init(configuration: AccessEnablerConfiguration, store: TokenStore, delegate: EntitlementDelegate) {
        self.configuration = configuration
        self.store = store
        self.delegate = delegate
    }

    func setRequestor(_ requestorID: String, serviceProviders: [URL]?) async -> Int32 {
        shared.withLock { $0.requestorWasSet = true }
        delegate.setRequestorComplete(0)
        return 0
    }

    func checkAuthentication() async -> AuthenticationStatus { .failed(ErrorCode.userNotAuthenticated) }

    func getAuthentication(forceAuthn: Bool, data: JSONObject?, filter: [String]?) async -> AuthenticationStatus {
        .failed(ErrorCode.genericAuthentication)
    }

    func setSelectedProvider(_ mvpdId: String?) async -> SelectionOutcome { .ended(.failed(ErrorCode.providerNotSelected)) }

    func handleExternalURL() async -> AuthenticationStatus { .failed(ErrorCode.genericAuthentication) }

    func checkPreauthorizedResources(_ resources: [String], cache: Bool) async -> [String] { [] }

    func authorize(_ resource: String, data: JSONObject?, loginIfNeeded: Bool) async -> AuthorizationOutcome {
        .failed(resource: resource, errorCode: ErrorCode.userNotAuthenticated, errorDescription: "")
    }

    func logout() async -> AuthenticationStatus { .failed(ErrorCode.userNotAuthenticated) }

    func getMetadata(_ request: MetadataRequest, arguments: JSON) async -> MetadataStatus {
        MetadataStatus(metadata: .null, encrypted: false, key: request.key, arguments: arguments)
    }

    func cancel() async {}
}
