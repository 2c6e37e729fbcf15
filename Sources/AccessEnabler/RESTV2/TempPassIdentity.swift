import JSON

/// The `data` of getAuthentication, checkAuthorization and getAuthorization: REST API V2 carries it as the
/// promotional TempPass identity, `AP-TempPass-Identity: base64(JSON object)` (Adobe's "Promotional TempPass"
/// pages), on sessions, `profiles/{mvpd}` and decisions calls.
enum TempPassIdentity {
    static let header = "AP-TempPass-Identity"

    /// The header for `data`; none for nil or an empty object.
    static func headers(_ data: JSONObject?) -> [(String, String)] {
        guard let data, !data.isEmpty else { return [] }
        return [(header, Base64.encode(JSON.object(data).serializedString().utf8))]
    }
}
