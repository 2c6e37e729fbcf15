import Foundation
import JSON

// Partner single sign-on for `Apple` (Adobe Pass REST API V2, "Partner Single Sign-On APIs"): PS1 hands out a SAML verification token,
// `POST /__admin/partner-saml` plays the MVPD answering the platform, PS2 turns the answer into an appleSSO profile.
extension Emulator {
    static let partners: Set<String> = ["Apple"]

    /// `POST /api/v2/{sp}/sessions/sso/{partner}` (form: domainName, redirectUrl; header AP-Partner-Framework-Status).
    func partnerSession(_ request: HTTPRequest, _ sp: String, partner: String) throws(Failure) -> HTTPResponse {
        let caller = try caller(request, sp, device: true)
        guard Self.partners.contains(partner) else { throw Failure("invalid_parameter_partner") }
        let form = request.form
        let redirect = nonEmpty(form["redirectUrl"])
        if let redirect, !Self.isValidRedirect(redirect) { throw Failure("invalid_parameter_redirect_url") }
        let status = PartnerFrameworkStatus(header: request.header("ap-partner-framework-status"))
        let provider = status?.providerID.flatMap(caller.serviceProvider.mvpd(platformMappingId:))
        let validated: MVPDConfig? = status.flatMap { try? $0.validate(caller.serviceProvider, now: caller.now) }
        func fallbackSession(_ mvpd: MVPDConfig?) -> AuthenticationSession {
            let session = AuthenticationSession(
                code: Random.code(), sessionID: Random.uuid(), serviceProvider: sp, clientID: caller.clientID, deviceID: caller.deviceID,
                deviceInfo: caller.deviceInfo, mvpd: mvpd?.id, domainName: nonEmpty(form["domainName"]), redirectURL: redirect,
                notBefore: caller.now, notAfter: caller.now + caller.serviceProvider.codeTTLSeconds * 1000)
            state.withLock { $0.sessions[session.code] = session }
            return session
        }
        if redirect == nil || nonEmpty(form["domainName"]) == nil {
            return .json(200, sessionBody(fallbackSession(validated ?? provider), next: "resume", reason: "missing_parameters_fallback"))
        }
        guard let mvpd = validated else {
            let session = fallbackSession(provider)
            return .json(200, sessionBody(session, next: session.mvpd == nil ? "resume" : "authenticate", reason: "pfs_fallback"))
        }
        guard mvpd.supportsPartnerSSO(partner), platformServices(of: mvpd, in: sp) else {
            return .json(200, sessionBody(fallbackSession(mvpd), next: "authenticate", reason: "configuration_fallback"))
        }
        let sessionID = Random.uuid()
        if let key = caller.profileKey, let profile = state.withLock({ $0.profiles[key]?[mvpd.id] }), profile.notAfter > caller.now {
            return .json(
                200,
                [
                    "actionName": "authorize", "actionType": "direct",
                    "reasonType": .string(profile.type == "appleSSO" ? "authenticatedSSO" : "authenticated"),
                    "url": .string("/api/v2/\(sp)/decisions/authorize/\(mvpd.id)"), "sessionId": .string(sessionID),
                    "mvpd": .string(mvpd.id), "serviceProvider": .string(sp),
                ])
        }
        let requestID = "_" + Random.hex(16)
        state.withLock {
            $0.partnerRequests[requestID] = PartnerRequest(id: requestID, serviceProvider: sp, mvpd: mvpd.id, issuedAt: caller.now)
        }
        let query =
            "<samlp:AttributeQuery xmlns:samlp=\"urn:oasis:names:tc:SAML:2.0:protocol\" xmlns:saml=\"urn:oasis:names:tc:SAML:2.0:assertion\""
            + " ID=\"\(requestID)\" Version=\"2.0\" IssueInstant=\"\(caller.now)\"><saml:Issuer>https://saml.sp.auth.adobe.com</saml:Issuer>"
            + "<saml:Attribute Name=\"uid\"/></samlp:AttributeQuery>"
        return .json(
            200,
            [
                "actionName": "partner_profile", "actionType": "direct", "reasonType": "none",
                "url": .string("/api/v2/\(sp)/profiles/sso/\(partner)"), "sessionId": .string(sessionID),
                "mvpd": .string(mvpd.id), "serviceProvider": .string(sp),
                "authenticationRequest": .object(["type": "saml", "request": .string(Base64.encode(query)), "attributesNames": ["uid"]]),
            ])
    }

    /// `POST /api/v2/{sp}/profiles/sso/{partner}` (form: SAMLResponse = base64 of the SAML response): 201 with an
    /// appleSSO profile, or 400 `invalid_header_pfs_*` / `invalid_parameter_saml_response`.
    func partnerProfile(_ request: HTTPRequest, _ sp: String, partner: String) throws(Failure) -> HTTPResponse {
        let caller = try caller(request, sp, device: true)
        guard Self.partners.contains(partner) else { throw Failure("invalid_parameter_partner") }
        let status = PartnerFrameworkStatus(header: request.header("ap-partner-framework-status")) ?? PartnerFrameworkStatus(header: "")!
        let mvpd = try status.validate(caller.serviceProvider, now: caller.now)
        guard let encoded = nonEmpty(request.form["SAMLResponse"]), let data = Base64.decode(encoded),
            let xml = String(data: data, encoding: .utf8), let assertion = MockSAML.verify(xml, key: key),
            let pending = state.withLock({ $0.partnerRequests[assertion.requestID] }), pending.serviceProvider == sp,
            let samlMVPD = caller.serviceProvider.mvpd(platformMappingId: assertion.providerID),
            let user = config.user(named: assertion.username)
        else { throw Failure("invalid_parameter_saml_response") }
        guard samlMVPD.id == mvpd.id else { throw Failure("invalid_header_pfs_provider_id_mismatch") }
        guard let key = caller.profileKey else { throw Failure("invalid_header_device_identifier") }
        let profile = saveProfile(
            key: key, mvpd: mvpd.id, user: user, type: "appleSSO", issuer: partner, now: caller.now,
            ttlSeconds: caller.serviceProvider.profileTTLSeconds)
        return .json(201, ["profiles": .object([mvpd.id: profile.json])])
    }
}

/// The mock SAML attribute-query response minted by `/__admin/partner-saml`: one line of XML with the request id,
/// the provider, the user, and an RSA-SHA256 signature (emulator key) over `requestID|providerID|username|issueInstant`.
enum MockSAML {
    struct Assertion {
        var requestID: String
        var providerID: String
        var username: String
    }

    static func mint(requestID: String, providerID: String, username: String, userID: String, now: Int64, key: RSAKey) -> String? {
        guard let signature = key.sign(Array("\(requestID)|\(providerID)|\(username)|\(now)".utf8)) else { return nil }
        return "<samlp:Response xmlns:samlp=\"urn:oasis:names:tc:SAML:2.0:protocol\" xmlns:saml=\"urn:oasis:names:tc:SAML:2.0:assertion\""
            + " ID=\"_\(Random.hex(16))\" InResponseTo=\"\(XML.escape(requestID))\" IssueInstant=\"\(now)\" Version=\"2.0\">"
            + "<saml:Issuer>\(XML.escape(providerID))</saml:Issuer><saml:Assertion><saml:Subject><saml:NameID>\(XML.escape(username))</saml:NameID>"
            + "</saml:Subject><saml:AttributeStatement><saml:Attribute Name=\"uid\"><saml:AttributeValue>\(XML.escape(userID))</saml:AttributeValue>"
            + "</saml:Attribute></saml:AttributeStatement></saml:Assertion>"
            + "<SignatureValue>\(Data(signature).base64EncodedString())</SignatureValue></samlp:Response>"
    }

    /// The assertion when the XML is one this emulator signed; nil otherwise.
    static func verify(_ xml: String, key: RSAKey) -> Assertion? {
        guard let requestID = attribute(xml, "InResponseTo"), let instant = attribute(xml, "IssueInstant"),
            let provider = XML.elementText(xml, "saml:Issuer").map(XML.unescape),
            let username = XML.elementText(xml, "saml:NameID").map(XML.unescape),
            let signatureText = XML.elementText(xml, "SignatureValue"), let signature = Data(base64Encoded: signatureText),
            key.verify(Array("\(requestID)|\(provider)|\(username)|\(instant)".utf8), signature: [UInt8](signature))
        else { return nil }
        return Assertion(requestID: requestID, providerID: provider, username: username)
    }

    /// The unescaped value of `name="…"` in the text.
    static func attribute(_ xml: String, _ name: String) -> String? {
        guard let start = xml.range(of: " \(name)=\"") else { return nil }
        guard let end = xml[start.upperBound...].firstIndex(of: "\"") else { return nil }
        return XML.unescape(String(xml[start.upperBound..<end]))
    }
}
