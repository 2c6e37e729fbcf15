import Foundation
import JSON

/// The two single sign-on methods that need no partner framework (Adobe Pass REST API V2, "Single Sign-On -
/// Platform Identity - Flows" and "Single Sign-On - Service Token - Flows"): a token the platform gives every app
/// on the device (`Adobe-Subject-Token`, or Roku's `X-Roku-Reserved-Roku-Connect-Token`) or one the programmer's
/// own identity service issues for the user on any device (`AD-Service-Token`). README.md next to this file,
/// "Single sign-on by platform identity and by service token".
enum SSOKind: String, CaseIterable {
    /// Platform identity: the profile type is `platformSSO`.
    case platform = "platformSSO"
    /// Service token: the profile type is `serviceTokenSSO`.
    case service = "serviceTokenSSO"

    /// The request headers that carry this kind's token, lower-cased.
    var headers: [String] {
        switch self {
        case .platform: ["adobe-subject-token", "x-roku-reserved-roku-connect-token"]
        case .service: ["ad-service-token"]
        }
    }
}

/// Who a token names: its kind and its JWT claims `iss` and `sub` (`iss|sub`).
struct SSOIdentity: Hashable {
    var kind: SSOKind
    var subject: String
}

/// A login made while a token was sent: the MVPD user and the regular profile's validity (ms).
struct SSOLogin {
    var username: String
    var notBefore: Int64
    var notAfter: Int64
}

extension Emulator {
    /// The identities the request's SSO headers name. A token that is not a JWT whose payload has a `sub` is
    /// ignored: the request is served without single sign-on, as Adobe's backend does with an invalid token.
    static func ssoIdentities(_ request: HTTPRequest) -> [SSOIdentity] {
        SSOKind.allCases.compactMap { kind in
            kind.headers.lazy.compactMap { request.header($0) }.first.flatMap(subject(ofJWT:)).map { SSOIdentity(kind: kind, subject: $0) }
        }
    }

    /// `iss|sub` of a JWS/JWT (the signature is not checked: the emulator has no platform's keys); nil when the
    /// payload cannot be read or has no `sub`.
    static func subject(ofJWT token: String) -> String? {
        let parts = token.trimmingCharacters(in: .whitespaces).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 3, let data = Base64.decodeURL(String(parts[1])) ?? Base64.decode(String(parts[1])),
            let claims = try? JSON.parse([UInt8](data)), let subject = claims["sub"]?.stringValue, !subject.isEmpty
        else { return nil }
        return "\(claims["iss"]?.stringValue ?? "")|\(subject)"
    }

    /// After a regular login at `mvpd` whose session was created with SSO tokens: each of those identities is
    /// logged in there too, with the same user and validity, for every app (client, device, service provider).
    func recordSSOLogins(_ identities: [SSOIdentity], mvpd: String, profile: IssuedProfile) {
        guard let username = profile.username, !identities.isEmpty else { return }
        let login = SSOLogin(username: username, notBefore: profile.notBefore, notAfter: profile.notAfter)
        state.withLock { state in
            for identity in identities { state.ssoLogins[identity, default: [:]][mvpd] = login }
        }
    }

    /// The `platformSSO` / `serviceTokenSSO` profile the request's tokens give at `mvpd`, if one of them logged in
    /// there and that login is still valid: issuer the MVPD, attributes `upstreamUserID`, `userID` and `mvpd`
    /// (as in Adobe's examples), plus the user's configured ones.
    func ssoProfile(_ request: HTTPRequest, mvpd: MVPDConfig, now: Int64) -> IssuedProfile? {
        for identity in Self.ssoIdentities(request) {
            guard let login = state.withLock({ $0.ssoLogins[identity]?[mvpd.id] }), login.notAfter > now,
                let user = config.user(named: login.username)
            else { continue }
            var attributes = self.attributes(for: user)
            let userID = attributes["userID"] ?? .object(["value": .string(user.username), "state": "plain"])
            attributes["upstreamUserID"] = userID
            attributes["mvpd"] = .object(["value": .string(mvpd.id), "state": "plain"])
            return IssuedProfile(
                mvpd: mvpd.id, type: identity.kind.rawValue, issuer: mvpd.id, notBefore: login.notBefore, notAfter: login.notAfter,
                attributes: attributes, username: user.username)
        }
        return nil
    }

    /// Single logout: a logout sent with SSO tokens also ends those identities' logins at `mvpd`. Returns
    /// whether one was ended.
    func ssoLogout(_ request: HTTPRequest, mvpd: String) -> Bool {
        let identities = Self.ssoIdentities(request)
        return state.withLock { state in
            var ended = false
            for identity in identities where state.ssoLogins[identity]?.removeValue(forKey: mvpd) != nil { ended = true }
            return ended
        }
    }
}
