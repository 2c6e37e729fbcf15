import JSON

/// Everything the emulator remembers between requests. Guarded by the emulator's mutex; `/__admin/reset` empties it.
struct EmulatorState {
    /// DCR clients by client_id.
    var clients: [String: Client] = [:]
    /// Access tokens by token value.
    var tokens: [String: AccessToken] = [:]
    /// Authentication sessions by code.
    var sessions: [String: AuthenticationSession] = [:]
    /// Profiles by (client, service provider, device), then by MVPD id.
    var profiles: [IssuedProfileKey: [String: IssuedProfile]] = [:]
    /// One-time login tickets from the mock MVPD to the SP's assertion consumer.
    var tickets: [String: Ticket] = [:]
    /// TempPass start times (ms) by (service provider, MVPD, device).
    var tempPassStarts: [TempPassKey: Int64] = [:]
    /// Promotional TempPass trials by (service provider, MVPD), in the order they started.
    var promoTrials: [TempPassScope: [PromoTrial]] = [:]
    /// Partner SSO verification tokens (request ids) issued by `sessions/sso/{partner}`.
    var partnerRequests: [String: PartnerRequest] = [:]
    /// Injected faults, in the order they were added.
    var faults: [Fault] = []
    /// The built-in throttle and its buckets, or nil when off.
    var throttle: Throttle?
    /// Limits, degradation rules and item-level errors set through the admin interface (`Rules`).
    var rules = Rules()
    /// The REST V2 and DCR calls received, in order (`GET /__admin/requests`).
    var requests: [LoggedRequest] = []
    /// Platform-identity and service-token logins, by identity, then by MVPD id (`SingleSignOn.swift`).
    var ssoLogins: [SSOIdentity: [String: SSOLogin]] = [:]
    /// MVPDs whose platform services (single sign-on) were switched off at run time (`POST /__admin/platform-services`).
    var platformServicesOff: Set<MVPDKey> = []
}

/// An MVPD of one service provider.
struct MVPDKey: Hashable {
    var serviceProvider: String
    var mvpd: String
}

struct Client {
    var id: String
    var secret: String
    var softwareStatement: String
    var redirectURIs: [String]
}

struct AccessToken {
    var clientID: String
    var softwareStatement: String
    var expiresAt: Int64
}

/// An authentication session (Adobe Pass REST API V2, "Sessions"). Times in ms.
struct AuthenticationSession {
    var code: String
    var sessionID: String
    var serviceProvider: String
    var clientID: String
    var deviceID: String?
    var deviceInfo: JSON?
    var mvpd: String?
    var domainName: String?
    var redirectURL: String?
    var notBefore: Int64
    var notAfter: Int64
    /// Set when the login completed: where the profile lives and when it was made.
    var completedProfile: (key: IssuedProfileKey, mvpd: String, notBefore: Int64)?
    /// The SSO tokens' identities sent when the session was created: the login completes for them too.
    var ssoIdentities: [SSOIdentity] = []

    var missingParameters: [String] {
        var missing: [String] = []
        if mvpd == nil { missing.append("mvpd") }
        if domainName == nil { missing.append("domainName") }
        if redirectURL == nil { missing.append("redirectUrl") }
        return missing
    }
}

struct IssuedProfileKey: Hashable {
    var clientID: String
    var serviceProvider: String
    var deviceID: String
}

/// A profile (Adobe Pass REST API V2, "Profiles"). `type` is regular, appleSSO, platformSSO, serviceTokenSSO,
/// temporary or degraded.
struct IssuedProfile {
    var mvpd: String
    var type: String
    var issuer: String
    var notBefore: Int64
    var notAfter: Int64
    var attributes: JSONObject
    /// The mock MVPD user behind it (nil for TempPass and degraded profiles).
    var username: String?

    var json: JSON {
        .object([
            "notBefore": .integer(notBefore), "notAfter": .integer(notAfter),
            "issuer": .string(issuer), "type": .string(type), "attributes": .object(attributes),
        ])
    }
}

struct Ticket {
    var code: String
    var username: String
    var mvpd: String
}

struct TempPassKey: Hashable {
    var serviceProvider: String
    var mvpd: String
    var deviceID: String
}

struct PartnerRequest {
    var id: String
    var serviceProvider: String
    var mvpd: String
    var issuedAt: Int64
}
