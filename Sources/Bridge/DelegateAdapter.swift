import AccessEnabler
import JSON
import Synchronization

/// Turns each `EntitlementDelegate` callback into its JSON-RPC notification (Protocol/README.md).
///
/// The engine calls these synchronously before returning an operation's outcome, so every notification is
/// queued on the connection before the response that the outcome produces.
///
/// Once its instance is replaced (a later `init`), it sends nothing more: the replaced instance's flows end, and
/// their requests are answered, without a notification (Protocol/README.md, Lifecycle 2).
final class DelegateAdapter: EntitlementDelegate {
    let outbound: any Outbound
    private let replaced = Atomic<Bool>(false)
    /// The host was told presentTvProviderDialog and not yet dismissTvProviderDialog.
    private let pickerShown = Atomic<Bool>(false)

    init(outbound: any Outbound) { self.outbound = outbound }

    /// The instance was replaced: later callbacks are dropped, and its partner SSO host asks the host nothing more.
    /// A platform picker it showed is dismissed first, before the response of the init that replaced it
    /// (Protocol/README.md, "Partner single sign-on").
    func detach() {
        if pickerShown.load(ordering: .acquiring) { dismissTvProviderDialog() }
        replaced.store(true, ordering: .releasing)
    }

    /// Whether `detach` ran.
    var detached: Bool { replaced.load(ordering: .acquiring) }

    private func notify(method: String, params: JSON) {
        guard !replaced.load(ordering: .acquiring) else { return }
        outbound.notify(method: method, params: params)
    }

    func setRequestorComplete(_ status: Int32) {
        notify(method: "setRequestorComplete", params: ["status": .integer(Int64(status))])
    }

    func setAuthenticationStatus(_ status: Int32, errorCode: String) {
        notify(
            method: "setAuthenticationStatus",
            params: Wire.authentication(AuthenticationStatus(status: status, errorCode: errorCode)))
    }

    func setToken(_ token: String, forResource resource: String) {
        notify(method: "setToken", params: Wire.authorization(.token(token: token, resource: resource)))
    }

    func tokenRequestFailed(_ resource: String, errorCode: String, errorDescription: String) {
        notify(
            method: "tokenRequestFailed",
            params: Wire.authorization(.failed(resource: resource, errorCode: errorCode, errorDescription: errorDescription)))
    }

    func selectedProvider(_ mvpd: MVPD?) {
        notify(method: "selectedProvider", params: ["mvpd": Wire.mvpd(mvpd)])
    }

    func displayProviderDialog(_ mvpds: [MVPD]) {
        notify(method: "displayProviderDialog", params: ["mvpds": .array(mvpds.map { Wire.mvpd($0) })])
    }

    func sendTrackingData(_ data: [String?], forEventType event: Int32) {
        notify(
            method: "sendTrackingData",
            params: ["data": .array(data.map { Wire.optional($0) }), "eventType": .integer(Int64(event))])
    }

    func setMetadataStatus(_ metadata: JSON, encrypted: Bool, forKey key: Int32, andArguments arguments: JSON, expires: Int64?) {
        notify(
            method: "setMetadataStatus",
            params: Wire.metadata(
                MetadataStatus(metadata: metadata, encrypted: encrypted, key: key, arguments: arguments, expires: expires)))
    }

    func preauthorizedResources(_ resources: [String]) {
        notify(method: "preauthorizedResources", params: Wire.preauthorized(PreauthorizedResources(resources: resources)))
    }

    /// `useSVC` is sent only when true (the SDK's `navigateToUrl:useSVC:` variant).
    func navigate(toUrl url: String, useSVC: Bool) {
        var params: JSONObject = ["url": .string(url)]
        if useSVC { params["useSVC"] = true }
        notify(method: "navigateToUrl", params: .object(params))
    }

    func presentTvProviderDialog() {
        pickerShown.store(true, ordering: .releasing)
        notify(method: "presentTvProviderDialog", params: .object([:]))
    }

    func dismissTvProviderDialog() {
        pickerShown.store(false, ordering: .releasing)
        notify(method: "dismissTvProviderDialog", params: .object([:]))
    }

    func status(_ status: AdvancedStatus) {
        notify(method: "status", params: Wire.status(status))
    }
}
