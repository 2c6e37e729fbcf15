import JSON

/// Builds the OpenAPI `Device` object of a session retrieve answer from the creating device's `X-Device-Info`
/// (Adobe Pass REST API V2, the `X-Device-Info` header). Unknown fields are left out rather than sent as null.
enum DeviceDescription {
    static let hardwareTypes: Set<String> = [
        "Camera", "DataCollectionTerminal", "Desktop", "EmbeddedNetworkModule", "eReader", "GamesConsole", "GeolocationTracker",
        "Glasses", "MediaPlayer", "MobilePhone", "PaymentTerminal", "PluginModem", "SetTopBox", "TV", "Tablet", "WirelessHotspot",
        "Wristwatch", "VehicleMultimediaSystem", "Projector", "Unknown",
    ]

    static func object(from info: JSON?) -> JSON {
        func text(_ key: String) -> String? { info?[key]?.stringValue }
        var device: JSONObject = [:]
        let type = text("primaryHardwareType") ?? text("type") ?? "Unknown"
        device["type"] = .string(hardwareTypes.contains(type) ? type : "Unknown")
        if let model = text("model") { device["model"] = .string(model) }
        device["version"] = version(text("version"))
        var hardware: JSONObject = ["version": version(nil)]
        if let vendor = text("vendor") { hardware["vendor"] = .string(vendor) }
        if let manufacturer = text("manufacturer") { hardware["manufacturer"] = .string(manufacturer) }
        if let model = text("model") { hardware["name"] = .string(model) }
        device["hardware"] = .object(hardware)
        var os: JSONObject = ["version": version(text("osVersion"))]
        os["name"] = .string(text("osName") ?? "Unknown")
        os["family"] = .string(text("osFamily") ?? text("osName") ?? "Unknown")
        if let vendor = text("osVendor") { os["vendor"] = .string(vendor) }
        device["operatingSystem"] = .object(os)
        var display: JSONObject = [:]
        if let width = info?["displayWidth"]?.int64Value { display["width"] = .integer(width) }
        if let height = info?["displayHeight"]?.int64Value { display["height"] = .integer(height) }
        if let ppi = info?["displayPpi"]?.int64Value { display["ppi"] = .integer(ppi) }
        device["display"] = .object(display)
        if let app = text("applicationId") { device["applicationId"] = .string(app) }
        var connection: JSONObject = [:]
        if let port = info?["connectionPort"] { connection["port"] = .string(port.stringValue ?? port.serializedString()) }
        if let secure = info?["connectionSecure"]?.boolValue { connection["secure"] = .bool(secure) }
        if let kind = text("connectionType") { connection["type"] = .string(kind) }
        device["connection"] = .object(connection)
        return .object(device)
    }

    /// `"14.2.1"` → `{major: 14, minor: 2, patch: 1, profile: ""}`; non-numeric parts become 0.
    static func version(_ text: String?) -> JSON {
        let numbers = (text ?? "").split(whereSeparator: { $0 == "." || $0 == "," }).map { Int64($0) ?? 0 }
        func at(_ index: Int) -> JSON { .integer(index < numbers.count ? numbers[index] : 0) }
        return .object(["major": at(0), "minor": at(1), "patch": at(2), "profile": ""])
    }
}
