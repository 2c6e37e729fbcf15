import JSON
import Synchronization

/// setOptions values (Adobe's "iOS/tvOS API Reference"). `applicationProfile` is accepted and not kept: REST API V2
/// defines no header or parameter that carries it (`Protocol/README.md`, "Values").
struct Options: Sendable {
    var visitorID: String?
    /// Base64 JSON given by the host; replaces the computed X-Device-Info.
    var deviceInfo: String?
    var handleSVC = false

    mutating func apply(_ options: JSONObject) {
        if let value = options["visitorID"] { visitorID = value.stringValue }
        if let value = options["device_info"] { deviceInfo = value.stringValue }
        if let value = options["handleSVC"] { handleSVC = value.boolValue ?? false }
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
