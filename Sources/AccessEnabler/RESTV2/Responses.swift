import Glibc
import JSON

// The 2xx bodies of the `RESTV2` endpoints, read into values (shapes as in Adobe's "REST API V2" and
// "DCR API" OpenAPI documents). Each `init?` fails only when the body is not of that operation at all;
// missing optional fields stay nil.

extension RESTV2 {
    /// Epoch ms from a number or a numeric string (sessions send strings, profiles and decisions numbers).
    static func millis(_ value: JSON?) -> Int64? {
        value?.int64Value ?? value?.stringValue.flatMap { Int64($0) }
    }
}

/// `GET configuration`: the tracking values and the MVPD list (under `requestor`, or at the top level).
struct ConfigurationAnswer: Sendable {
    var device: String?
    var clientType: String?
    var os: String?
    /// In the backend's order; entries without an `id` are skipped.
    var mvpds: [MVPD]

    /// nil without a `requestor` object.
    init?(_ body: JSON) {
        guard body["requestor"]?.objectValue != nil else { return nil }
        device = body["device"]?.stringValue
        clientType = body["clientType"]?.stringValue
        os = body["os"]?.stringValue
        let list = body["requestor"]?["mvpds"]?.arrayValue ?? body["mvpds"]?.arrayValue ?? []
        mvpds = list.compactMap(MVPD.init(configuration:))
    }
}

extension MVPD {
    /// An MVPD from a configuration entry; nil without `id`.
    init?(configuration item: JSON) {
        guard let id = item["id"]?.stringValue else { return nil }
        self.init(
            ID: id, displayName: item["displayName"]?.stringValue ?? id, logoURL: item["logoUrl"]?.stringValue,
            enablePlatformServices: item["enablePlatformServices"]?.boolValue ?? false,
            boardingStatus: item["boardingStatus"]?.stringValue,
            displayInPlatformPicker: item["displayInPlatformPicker"]?.boolValue ?? false,
            platformMappingId: item["platformMappingId"]?.stringValue, isTempPass: item["isTempPass"]?.boolValue ?? false,
            requiresSVC: item["requiresSVC"]?.boolValue ?? false)
    }
}

/// `POST sessions` and `POST sessions/sso/{partner}`: what the backend wants next. Any 2xx JSON body reads
/// as one (an unknown `actionName` is `.other`).
struct SessionAnswer: Sendable {
    enum Action: Sendable, Equatable {
        /// A profile exists: read it (`profiles/{mvpd}`).
        case authorize
        /// The user must log in at `url` with `code`.
        case authenticate
        /// Partner SSO: the platform must answer `partnerRequest`.
        case partnerProfile
        /// Anything else (`pfs_fallback`, `configuration_fallback`, …) or no `actionName`.
        case other(String?)
    }

    var action: Action
    var code: String?
    var url: String?
    var mvpd: String?
    /// When the code expires, epoch ms.
    var notAfter: Int64?
    /// Partner SSO: `authenticationRequest.request` and `.attributesNames`.
    var partnerRequest: String?
    var attributeNames: [String]?

    init?(_ body: JSON) {
        let name = body["actionName"]?.stringValue
        switch name {
        case "authorize": action = .authorize
        case "authenticate": action = .authenticate
        case "partner_profile": action = .partnerProfile
        default: action = .other(name)
        }
        code = body["code"]?.stringValue
        url = body["url"]?.stringValue
        mvpd = body["mvpd"]?.stringValue
        notAfter = RESTV2.millis(body["notAfter"])
        partnerRequest = body["authenticationRequest"]?["request"]?.stringValue
        attributeNames = body["authenticationRequest"]?["attributesNames"]?.arrayValue?.compactMap(\.stringValue)
    }
}

/// `GET profiles/{mvpd}`, `GET profiles/code/{code}`, `POST profiles/sso/{partner}`: `{"profiles": {mvpd: profile}}`.
struct ProfilesAnswer: Sendable {
    /// The `profiles` object as sent (possibly empty).
    var profiles: JSONObject

    /// nil when `profiles` is not an object.
    init?(_ body: JSON) {
        guard let map = body["profiles"]?.objectValue else { return nil }
        profiles = map
    }

    /// `mvpd`'s profile when there is one, else the first profile in the answer.
    func first(preferring mvpd: String?) -> Profile? {
        if let mvpd, let json = profiles[mvpd], json.objectValue != nil { return Profile(mvpd: mvpd, json: json) }
        for (key, value) in profiles where value.objectValue != nil { return Profile(mvpd: key, json: value) }
        return nil
    }
}

/// `POST decisions/authorize/{mvpd}` and `decisions/preauthorize/{mvpd}`: `{"decisions": [...]}`.
struct DecisionsAnswer: Sendable {
    var decisions: [Decision]

    /// nil when `decisions` is not an array.
    init?(_ body: JSON) {
        guard let list = body["decisions"]?.arrayValue else { return nil }
        decisions = list.map(Decision.init)
    }

    /// The decision for `resource`: the first that echoes it byte for byte (REST API V2 answers each resource "as
    /// sent"; Swift's `==` would also take another Unicode normalization of it, a resource the backend tells apart),
    /// else a lone decision with no `resource` member. Never one that names another, or names something that is not
    /// a string: an answer read from a connection out of step with its requests (bytes a server sent on an idle
    /// connection) would hand one resource's permit to another.
    func decision(for resource: String) -> Decision? {
        let asked = ResourceID(resource)
        if let echoed = decisions.first(where: { $0.authorized != nil && $0.resource.map(ResourceID.init) == asked }) { return echoed }
        return decisions.count == 1 && !decisions[0].namesResource ? decisions[0] : nil
    }

    /// The decisions of `asked` this answer holds: for each, the first that echoes it byte for byte and says whether
    /// it is authorized (one that does not, `"authorized": "true"`, is no decision). Decisions for resources not asked
    /// are ignored.
    func decisions(for asked: Set<ResourceID>) -> [ResourceID: Decision] {
        var found: [ResourceID: Decision] = [:]
        found.reserveCapacity(asked.count)
        for decision in decisions where decision.authorized != nil {
            guard let resource = decision.resource.map(ResourceID.init), asked.contains(resource), found[resource] == nil else { continue }
            found[resource] = decision
        }
        return found
    }
}

/// A resource id as REST API V2 tells resources apart: byte for byte. Swift's `String` equality and hashing take two
/// Unicode normalizations of one id ("ché" composed and decomposed) for the same, which the backend answers apart;
/// the preauthorization paths key their sets and dictionaries with this instead.
struct ResourceID: Hashable, Sendable {
    let text: String

    init(_ text: String) { self.text = text }

    static func == (lhs: Self, rhs: Self) -> Bool {
        let (left, right) = (lhs.text.utf8, rhs.text.utf8)
        guard left.count == right.count else { return false }
        let same = left.withContiguousStorageIfAvailable { left in
            right.withContiguousStorageIfAvailable { right in left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0
            }
        }
        return (same ?? nil) ?? left.elementsEqual(right)
    }

    func hash(into hasher: inout Hasher) {
        let utf8 = text.utf8
        if utf8.withContiguousStorageIfAvailable({ hasher.combine(bytes: UnsafeRawBufferPointer($0)) }) == nil {
            for byte in utf8 { hasher.combine(byte) }
        }
    }
}

/// One item of a decisions answer.
struct Decision: Sendable {
    var resource: String?
    /// Whether the decision has a `resource` member at all (a string or not).
    var namesResource: Bool
    /// nil when absent (an unreadable decision).
    var authorized: Bool?
    /// `token.serializedToken`: the media token of a permit.
    var mediaToken: String?
    /// The decision's `notAfter`, else its token's, epoch ms.
    var notAfter: Int64?
    /// `source`: `mvpd`, `degradation`, `temppass`, …
    var source: String?
    /// The item-level enhanced error of a deny or a failed item.
    var error: EnhancedError?

    init(_ item: JSON) {
        resource = item["resource"]?.stringValue
        namesResource = item["resource"] != nil
        authorized = item["authorized"]?.boolValue
        mediaToken = item["token"]?["serializedToken"]?.stringValue
        notAfter = RESTV2.millis(item["notAfter"]) ?? RESTV2.millis(item["token"]?["notAfter"])
        source = item["source"]?.stringValue
        error = EnhancedError(item["error"])
    }
}

/// `GET logout/{mvpd}`: `{"logouts": {mvpd: {actionName, url, …}}}`.
struct LogoutAnswer: Sendable {
    var body: JSON

    init?(_ body: JSON) { self.body = body }

    /// The entry for `mvpd`, else the first one.
    func entry(for mvpd: String) -> LogoutEntry? {
        (body["logouts"]?[mvpd] ?? body["logouts"]?.objectValue?.first(where: { _ in true })?.value).map(LogoutEntry.init)
    }
}

struct LogoutEntry: Sendable {
    /// `logout` (a page to open at `url`), `partner_logout`, `none`, …
    var actionName: String?
    var url: String?

    init(_ entry: JSON) {
        actionName = entry["actionName"]?.stringValue
        url = entry["url"]?.stringValue
    }
}

/// `POST /o/client/token`: the access token and its lifetime.
struct TokenAnswer: Sendable {
    var accessToken: String
    /// Seconds (the default 3600 when absent).
    var expiresIn: Int64
    /// Epoch ms; nil when absent.
    var createdAt: Int64?

    init?(_ body: JSON) {
        guard let token = body["access_token"]?.stringValue else { return nil }
        accessToken = token
        expiresIn = body["expires_in"]?.int64Value ?? 3600
        createdAt = body["created_at"]?.int64Value
    }
}

/// A DCR error body: OAuth's `{"error": "invalid_client", …}` or an enhanced error's `code`.
struct RegistrationError: Sendable, Equatable {
    var error: String?
    var code: String?

    init(_ body: JSON?) {
        error = body?["error"]?.stringValue
        code = body?["code"]?.stringValue
    }

    /// The stored client credentials are unknown to the backend: register again.
    var isInvalidClient: Bool { error == "invalid_client" }

    /// The software statement was refused (its `error`, else its `code`, names it).
    var refusesSoftwareStatement: Bool { ASCII.end(of: "software_statement", in: error ?? code ?? "") != nil }
}
