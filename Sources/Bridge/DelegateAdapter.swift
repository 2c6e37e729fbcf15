import AccessEnabler
import JSON

/// Turns each `EntitlementDelegate` callback into its JSON-RPC notification (Protocol/README.md).
///
/// The engine calls these synchronously before returning an operation's outcome, so every notification is
/// queued on the connection before the response that the outcome produces.
final class DelegateAdapter: EntitlementDelegate {
    let outbound: any Outbound

    init(outbound: any Outbound) { self.outbound = outbound }

    func setRequestorComplete(_ status: Int32) {
        outbound.notify(method: "setRequestorComplete", params: ["status": .integer(Int64(status))])
    }

    func setAuthenticationStatus(_ status: Int32, errorCode: String) {
        outbound.notify(
            method: "setAuthenticationStatus",
            params: Wire.authentication(AuthenticationStatus(status: status, errorCode: errorCode)))
    }

    func setToken(_ token: String, forResource resource: String) {
        outbound.notify(method: "setToken", params: Wire.authorization(.token(token: token, resource: resource)))
    }

    func tokenRequestFailed(_ resource: String, errorCode: String, errorDescription: String) {
        outbound.notify(
            method: "tokenRequestFailed",
            params: Wire.authorization(.failed(resource: resource, errorCode: errorCode, errorDescription: errorDescription)))
    }

    func selectedProvider(_ mvpd: MVPD?) {
        outbound.notify(method: "selectedProvider", params: ["mvpd": Wire.mvpd(mvpd)])
    }

    func displayProviderDialog(_ mvpds: [MVPD]) {
        outbound.notify(method: "displayProviderDialog", params: ["mvpds": .array(mvpds.map { Wire.mvpd($0) })])
    }

    func sendTrackingData(_ data: [String?], forEventType event: Int32) {
        outbound.notify(
            method: "sendTrackingData",
            params: ["data": .array(data.map { Wire.optional($0) }), "eventType": .integer(Int64(event))])
    }

    func setMetadataStatus(_ metadata: JSON, encrypted: Bool, forKey key: Int32, andArguments arguments: JSON, expires: Int64?) {
        outbound.notify(
            method: "setMetadataStatus",
            params: Wire.metadata(
                MetadataStatus(metadata: metadata, encrypted: encrypted, key: key, arguments: arguments, expires: expires)))
    }

    func preauthorizedResources(_ resources: [String]) {
        outbound.notify(method: "preauthorizedResources", params: Wire.resources(resources))
    }

    /// `useSVC` is sent only when true (the SDK's `navigateToUrl:useSVC:` variant).
    func navigate(toUrl url: String, useSVC: Bool) {
        var params: JSONObject = ["url": .string(url)]
        if useSVC { params["useSVC"] = true }
        outbound.notify(method: "navigateToUrl", params: .object(params))
    }

    func presentTvProviderDialog() {
        outbound.notify(method: "presentTvProviderDialog", params: .object([:]))
    }

    func dismissTvProviderDialog() {
        outbound.notify(method: "dismissTvProviderDialog", params: .object([:]))
    }

    func status(_ status: AdvancedStatus) {
        outbound.notify(method: "status", params: Wire.status(status))
    }
}
