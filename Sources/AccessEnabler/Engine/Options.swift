import JSON
import Synchronization

/// setOptions values (Adobe's "iOS/tvOS API Reference"). `applicationProfile` goes to the backend as the `profile`
/// query parameter of the configuration request (Adobe's "REST API V2" OpenAPI document, "Retrieve configuration
/// for specific service provider"; `Protocol/README.md`, "Values").
public struct Options: Sendable {
    /// The keys whose value is a string, in the order the OpenRPC document lists them.
    public static let stringKeys = ["applicationProfile", "visitorID", "device_info"]
    /// The keys whose value is a boolean.
    public static let boolKeys = ["handleSVC"]

    var applicationProfile: String?
    var visitorID: String?
    /// Base64 JSON given by the host; replaces the computed X-Device-Info.
    var deviceInfo: String?
    /// The host presents the Safari View Controller itself: the pages of an MVPD with `requiresSVC` are sent with
    /// `useSVC: true`.
    var handleSVC = false

    mutating func apply(_ options: JSONObject) {
        if let value = options["applicationProfile"] { applicationProfile = value.stringValue }
        if let value = options["visitorID"] { visitorID = value.stringValue }
        if let value = options["device_info"] { deviceInfo = value.stringValue }
        if let value = options["handleSVC"] { handleSVC = value.boolValue ?? false }
    }

    /// Whether a login or logout page of `mvpd` goes to the host with `useSVC: true` (Adobe's "iOS/tvOS API
    /// Reference", `navigateToUrl:useSVC:`): only with `handleSVC` set, and only for an MVPD the app listed
    /// (`listed`, init's `svcMVPDs`), else one whose configuration says it requires the Safari View Controller.
    func useSVC(for mvpd: MVPD?, listed: Set<String>?) -> Bool {
        guard handleSVC, let mvpd else { return false }
        return listed.map { $0.contains(mvpd.ID) } ?? mvpd.requiresSVC
    }
}

/// State read synchronously by the never-queued calls (under `Engine.shared`).
struct SharedState: Sendable {
    var options = Options()
    var selectedMVPD: MVPD?
}

/// A reference to the shared state, so closures (the REST clients' header source) can hold it.
final class SharedBox: Sendable {
    private let state = Mutex(SharedState())
    func withLock<R>(_ body: (inout SharedState) -> R) -> R { state.withLock { body(&$0) } }
}
