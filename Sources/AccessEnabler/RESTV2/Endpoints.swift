import JSON

/// The REST API V2 and DCR operations the engine uses, one constructor each (paths, query, headers and bodies
/// as in Adobe's "REST API V2" and "DCR API" OpenAPI documents). Identifiers taken from the host (requestor,
/// MVPD, partner, code) are percent-escaped as one path segment each.
enum RESTV2 {
    /// `value` as one path segment: every byte outside RFC 3986's unreserved characters escaped, and the dots of a
    /// `.` or `..` too, which would otherwise be a dot segment (RFC 3986 section 5.2.4) that libcurl removes:
    /// requestor `..` asked `/api/configuration`.
    static func segment(_ value: String) -> String {
        value == "." || value == ".." ? String(repeating: "%2E", count: value.count) : FormEncoding.escape(value)
    }

    /// `/api/v2/{requestor}` followed by `rest`.
    private static func api(_ requestor: String, _ rest: String) -> String { "/api/v2/\(segment(requestor))\(rest)" }

    /// The domain sent as `domainName` when creating sessions.
    static let domainName = "adobe.com"

    // MARK: configuration

    /// `GET /api/v2/{requestor}/configuration` ("Retrieve configuration for specific service provider"), with the
    /// optional query parameter `profile` (setOptions' `applicationProfile`: the backend may answer a configuration
    /// made for it) when one is given.
    static func configuration(_ requestor: String, profile: String? = nil) -> Endpoint<ConfigurationAnswer> {
        Endpoint(
            method: "GET", path: api(requestor, "/configuration"), query: profile.flatMap { $0.isEmpty ? nil : [("profile", $0)] } ?? [],
            decode: ConfigurationAnswer.init)
    }

    // MARK: sessions

    /// `POST /api/v2/{requestor}/sessions` ("Create authentication session"): form `mvpd`, `domainName`,
    /// `redirectUrl` (left out when nil: the OpenAPI document makes every parameter optional, and a session that
    /// lacks one answers `resume` with `missingParameters`); `identity` is the `AP-TempPass-Identity` header, if any.
    static func createSession(
        _ requestor: String, mvpd: String, redirectURL: String?, identity: [(String, String)]
    ) -> Endpoint<SessionAnswer> {
        var form = [("mvpd", mvpd), ("domainName", domainName)]
        if let redirectURL { form.append(("redirectUrl", redirectURL)) }
        return Endpoint(
            method: "POST", path: api(requestor, "/sessions"), headers: identity, body: .form(form), decode: SessionAnswer.init
        ).withSingleSignOn()
    }

    /// `/api/v2/authenticate/{requestor}/{code}` ("Perform authentication in user agent"): the page a browser opens
    /// to log in for a session; no bearer, opened by the user's browser, never by the engine.
    static func authenticatePath(_ requestor: String, code: String) -> String {
        "/api/v2/authenticate/\(segment(requestor))/\(segment(code))"
    }

    // MARK: profiles

    /// `GET /api/v2/{requestor}/profiles` ("Retrieve profiles"): every profile of this device and application, with
    /// those the single sign-on tokens give.
    static func profiles(_ requestor: String) -> Endpoint<ProfilesAnswer> {
        Endpoint(method: "GET", path: api(requestor, "/profiles"), decode: ProfilesAnswer.init).withSingleSignOn()
    }

    /// `GET /api/v2/{requestor}/profiles/{mvpd}` ("Retrieve profiles for specific MVPD"); `headers`: the partner
    /// framework status and/or the TempPass identity.
    static func profile(_ requestor: String, mvpd: String, headers: [(String, String)] = []) -> Endpoint<ProfilesAnswer> {
        Endpoint(method: "GET", path: api(requestor, "/profiles/\(segment(mvpd))"), headers: headers, decode: ProfilesAnswer.init)
            .withSingleSignOn()
    }

    /// `GET /api/v2/{requestor}/profiles/code/{code}` ("Retrieve profiles for specific code"): the profile a
    /// session's authentication code led to (after the login page or on the second screen).
    static func profile(_ requestor: String, code: String) -> Endpoint<ProfilesAnswer> {
        Endpoint(method: "GET", path: api(requestor, "/profiles/code/\(segment(code))"), decode: ProfilesAnswer.init)
    }

    // MARK: decisions

    /// `POST /api/v2/{requestor}/decisions/authorize/{mvpd}` ("Retrieve authorization decisions using specific
    /// MVPD"): JSON `{"resources": [...]}`.
    static func authorize(
        _ requestor: String, mvpd: String, resources: [String], headers: [(String, String)] = []
    ) -> Endpoint<DecisionsAnswer> {
        decisions("authorize", requestor, mvpd: mvpd, resources: resources, headers: headers)
    }

    /// `POST /api/v2/{requestor}/decisions/preauthorize/{mvpd}` ("Retrieve preauthorization decisions using
    /// specific MVPD"): JSON `{"resources": [...]}`.
    static func preauthorize(
        _ requestor: String, mvpd: String, resources: [String], headers: [(String, String)] = []
    ) -> Endpoint<DecisionsAnswer> {
        decisions("preauthorize", requestor, mvpd: mvpd, resources: resources, headers: headers)
    }

    private static func decisions(
        _ kind: String, _ requestor: String, mvpd: String, resources: [String], headers: [(String, String)]
    ) -> Endpoint<DecisionsAnswer> {
        Endpoint(
            method: "POST", path: api(requestor, "/decisions/\(kind)/\(segment(mvpd))"), headers: headers,
            body: .json(["resources": .array(resources.map { .string($0) })]), decode: DecisionsAnswer.init
        ).withSingleSignOn()
    }

    // MARK: logout

    /// `GET /api/v2/{requestor}/logout/{mvpd}?redirectUrl=…` ("Initiate logout for specific MVPD").
    static func logout(_ requestor: String, mvpd: String, redirectURL: String) -> Endpoint<LogoutAnswer> {
        Endpoint(
            method: "GET", path: api(requestor, "/logout/\(segment(mvpd))"), query: [("redirectUrl", redirectURL)],
            decode: LogoutAnswer.init
        ).withSingleSignOn()
    }

    // MARK: partner single sign-on

    /// `AP-Partner-Framework-Status`: the platform account's state, base64 JSON (Adobe's "REST API V2" OpenAPI document).
    static let partnerFrameworkStatusHeader = "AP-Partner-Framework-Status"

    /// The `AP-Partner-Framework-Status` value: base64 of `{frameworkPermissionInfo: {accessStatus},
    /// frameworkProviderInfo: {id, expirationDate}}`, the expiry (epoch ms) as a string; `frameworkProviderInfo`
    /// is `{}` when no provider is known.
    static func partnerFrameworkStatus(accessStatus: String, providerID: String?, expirationDate: Int64?) -> String {
        var provider = JSONObject()
        if let providerID { provider["id"] = .string(providerID) }
        if let expirationDate { provider["expirationDate"] = .string(String(expirationDate)) }
        let status: JSON = [
            "frameworkPermissionInfo": ["accessStatus": .string(accessStatus)], "frameworkProviderInfo": .object(provider),
        ]
        return Base64.encode(status.serialized())
    }

    /// `POST /api/v2/{requestor}/sessions/sso/{partner}` ("Retrieve partner authentication request"): form
    /// `domainName`, `redirectUrl`; `status` is the partner framework status value.
    static func partnerSession(_ requestor: String, partner: String, redirectURL: String, status: String) -> Endpoint<SessionAnswer> {
        Endpoint(
            method: "POST", path: api(requestor, "/sessions/sso/\(segment(partner))"),
            headers: [(partnerFrameworkStatusHeader, status)], body: .form([("domainName", domainName), ("redirectUrl", redirectURL)]),
            decode: SessionAnswer.init)
    }

    /// `POST /api/v2/{requestor}/profiles/sso/{partner}` ("Retrieve profile using partner authentication response"): form `SAMLResponse`, the
    /// platform's SAML response as `encodeSAML` makes it.
    static func partnerProfile(_ requestor: String, partner: String, samlResponse: String, status: String) -> Endpoint<ProfilesAnswer> {
        Endpoint(
            method: "POST", path: api(requestor, "/profiles/sso/\(segment(partner))"), headers: [(partnerFrameworkStatusHeader, status)],
            body: .form([("SAMLResponse", encodeSAML(samlResponse))]), decode: ProfilesAnswer.init)
    }

    /// The SAML response as the partner profile call wants it: runs of spaces and tabs collapsed to one space,
    /// line breaks removed, trimmed, then base64 (the form encoding percent-encodes it once).
    static func encodeSAML(_ xml: String) -> String {
        var text = ""
        var inBlank = false
        for scalar in xml.unicodeScalars {
            switch scalar {
            case "\r", "\n":
                continue
            case " ", "\t":
                if !inBlank { text.unicodeScalars.append(" ") }
                inBlank = true
            default:
                text.unicodeScalars.append(scalar)
                inBlank = false
            }
        }
        return Base64.encode(text.trimmingWhitespace().utf8)
    }

    // MARK: DCR (Adobe's "DCR API" OpenAPI document)

    /// `POST /o/client/register` ("Register client application"): JSON `software_statement`, `redirect_uri`.
    static func register(softwareStatement: String, redirectURL: String) -> Endpoint<ClientCredentials> {
        Endpoint(
            kind: .registration, method: "POST", path: "/o/client/register",
            body: .json(["software_statement": .string(softwareStatement), "redirect_uri": .string(redirectURL)]),
            decode: { answer in
                guard let id = answer["client_id"]?.stringValue, let secret = answer["client_secret"]?.stringValue else { return nil }
                return ClientCredentials(id: id, secret: secret)
            })
    }

    /// `POST /o/client/token` ("Retrieve client token"): form `client_id`, `client_secret`, `grant_type=client_credentials`.
    static func token(_ credentials: ClientCredentials) -> Endpoint<TokenAnswer> {
        Endpoint(
            kind: .registration, method: "POST", path: "/o/client/token",
            body: .form([("client_id", credentials.id), ("client_secret", credentials.secret), ("grant_type", "client_credentials")]),
            decode: TokenAnswer.init)
    }
}
