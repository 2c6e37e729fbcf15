/// The calls that wait while setRequestor is in flight and then run in arrival order (`Protocol/README.md`,
/// Lifecycle 3): the one list. The engine's machine holds them; no other call waits (setSelectedProvider,
/// handleExternalURL and getAuthenticationToken complete the login in progress under its requestor), but a
/// setSelectedProvider sent with no login in progress while a setRequestor is in flight, which joins their queue
/// (`Engine.ready`).
public enum WaitingCall: String, CaseIterable, Sendable {
    case checkAuthentication, getAuthentication, checkAuthorization, getAuthorization, checkPreauthorizedResources
    case preauthorize, getMetadata, logout
}
