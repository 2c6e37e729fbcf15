import JSON

/// The requestor's configuration as merged from its service providers (Adobe's "iOS/tvOS API Reference": setRequestor).
struct Requestor: Sendable {
    var id: String
    /// Every MVPD in the backends' order (service providers as listed; an MVPD listed by several keeps the first).
    private(set) var mvpds: [MVPD] = []
    /// The client of the service provider each MVPD was paired with.
    var clients: [String: RestClient] = [:]
    /// Each MVPD's place in `mvpds`, by id.
    private var positions: [String: Int] = [:]
    /// The store scopes of the clients MVPDs were paired with, in order of first use: one login each per device.
    private(set) var scopes: [StoreScope] = []
    /// The first service provider listed that answered (used for calls not tied to an MVPD).
    var primary: RestClient
    /// Tracking values from the configuration: device type, client type, OS.
    var deviceType: String?
    var clientType: String?
    var os: String?

    init(id: String, primary: RestClient) {
        self.id = id
        self.primary = primary
    }

    func mvpd(_ id: String) -> MVPD? { positions[id].map { mvpds[$0] } }

    func client(for mvpdID: String) -> RestClient { clients[mvpdID] ?? primary }

    /// Adds the MVPDs of one `GET configuration` answer that are not known yet.
    mutating func merge(configuration answer: ConfigurationAnswer, from client: RestClient) {
        if deviceType == nil {
            deviceType = answer.device
            clientType = answer.clientType
            os = answer.os
        }
        for mvpd in answer.mvpds {
            guard clients[mvpd.ID] == nil else { continue }
            positions[mvpd.ID] = mvpds.count
            mvpds.append(mvpd)
            clients[mvpd.ID] = client
            if !scopes.contains(client.scope) { scopes.append(client.scope) }
        }
    }

    /// The logins this requestor's profiles on `device` are stored under, one per scope.
    func logins(device: String) -> Set<LoginKey> {
        Set(scopes.map { LoginKey(scope: $0, device: device, requestor: id) })
    }

    /// The entries of `stored` (by login, then MVPD id) that are profiles of this requestor's MVPDs, each under the
    /// scope its MVPD is paired with, in the order of `mvpds`. One lookup per stored entry and none per MVPD listed:
    /// a requestor may list hundreds of MVPDs, a device is logged in with one or two.
    func own<Value>(_ stored: [LoginKey: [String: Value]]) -> [(ProfileKey, Value)] {
        var found: [(position: Int, key: ProfileKey, value: Value)] = []
        for (login, byMVPD) in stored {
            for (mvpd, value) in byMVPD {
                guard let position = positions[mvpd], client(for: mvpd).scope == login.scope else { continue }
                found.append((position, ProfileKey(login: login, mvpd: mvpd), value))
            }
        }
        if found.count > 1 { found.sort { $0.position < $1.position } }
        return found.map { ($0.key, $0.value) }
    }

    /// The common tail of tracking arrays: device type, client type, OS.
    var trackingTail: [String?] { [deviceType, clientType, os] }
}

/// A profile (the REST V2 authentication token) as stored: `{mvpd, notBefore, notAfter, issuer, type, attributes}`.
struct Profile: Sendable {
    let mvpd: String
    let json: JSON
    /// The tracking GUID: MD5 hex of the user id (Adobe's "iOS/tvOS API Reference": sendTrackingData), nil without
    /// a `userID` attribute. Made once per profile: every authorization and metadata call sends it.
    let trackingGUID: String?

    init(mvpd: String, json: JSON) {
        self.mvpd = mvpd
        self.json = json
        self.trackingGUID = Self.attribute("userID", of: json).map { Hash.md5Hex($0.value.stringValue ?? $0.value.serializedString()) }
    }

    var notAfter: Int64 { json["notAfter"]?.int64Value ?? 0 }
    var issuer: String? { json["issuer"]?.stringValue }
    var type: String? { json["type"]?.stringValue }
    var isTemporary: Bool { type == "temporary" }
    /// Issued under an authenticate-all degradation rule.
    var isDegraded: Bool { type == "degraded" }

    /// The value of attribute `name` and whether it is encrypted (`state` "enc").
    func attribute(_ name: String) -> (value: JSON, encrypted: Bool)? { Self.attribute(name, of: json) }

    private static func attribute(_ name: String, of json: JSON) -> (value: JSON, encrypted: Bool)? {
        guard let attribute = json["attributes"]?[name] else { return nil }
        if let value = attribute["value"] { return (value, attribute["state"]?.stringValue == "enc") }
        return (attribute, false)
    }

    /// `notBefore`: when the backend issued the profile, epoch ms (0 when absent).
    var notBefore: Int64 { json["notBefore"]?.int64Value ?? 0 }

    /// Every attribute's value by name, and the names of the encrypted ones (`state` "enc"), sorted.
    var userMetadata: (data: JSONObject, encrypted: [String]) {
        var data = JSONObject()
        var encrypted: [String] = []
        for (name, _) in json["attributes"]?.objectValue ?? [:] {
            guard let attribute = attribute(name) else { continue }
            data[name] = attribute.value
            if attribute.encrypted { encrypted.append(name) }
        }
        return (data, encrypted.sorted())
    }
}
