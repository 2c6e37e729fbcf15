import JSON

/// setOptions values (adobe-pass-sdk-notes §2.1).
struct Options: Sendable {
    var applicationProfile: String?
    var visitorID: String?
    /// Base64 JSON given by the host; replaces the computed X-Device-Info.
    var deviceInfo: String?
    var handleSVC = false

    mutating func apply(_ options: JSONObject) {
        if let value = options["applicationProfile"] { applicationProfile = value.stringValue }
        if let value = options["visitorID"] { visitorID = value.stringValue }
        if let value = options["device_info"] { deviceInfo = value.stringValue }
        if let value = options["handleSVC"] { handleSVC = value.boolValue ?? false }
    }
}

/// State read synchronously by the never-queued calls (under `Engine.shared`).
struct SharedState: Sendable {
    var options = Options()
    var selectedMVPD: MVPD?
    var requestorWasSet = false
}
