import Foundation
import JSON

// DCR (Adobe Pass, "Dynamic Client Registration API": "Retrieve client credentials", "Retrieve access token"):
// software statement → client credentials → bearer access token.
extension Emulator {
    /// `POST /o/client/register` `{software_statement, redirect_uri?}` → 201 client credentials.
    func register(_ request: HTTPRequest) -> HTTPResponse {
        guard let body = try? JSON.parse(request.body), body.objectValue != nil,
            let statement = body["software_statement"]?.stringValue
        else { return .json(400, ["error": "invalid_request"]) }
        if let redirect = body["redirect_uri"], !redirect.isNull, redirect.stringValue == nil {
            return .json(400, ["error": "invalid_redirect_uri"])
        }
        guard Self.isWellFormedJWT(statement) else { return .json(400, ["error": "invalid_software_statement"]) }
        if !config.softwareStatements.isEmpty, !config.softwareStatements.contains(statement) {
            return .json(400, ["error": "unapproved_software_statement"])
        }
        let redirects = body["redirect_uri"]?.stringValue.map { [$0] } ?? []
        let client = Client(id: Random.hex(12), secret: Random.hex(24), softwareStatement: statement, redirectURIs: redirects)
        state.withLock { $0.clients[client.id] = client }
        return .json(
            201,
            [
                "client_id": .string(client.id),
                "client_secret": .string(client.secret),
                "client_id_issued_at": .integer(clock.nowMillis() / 1000),
                "redirect_uris": .array(redirects.map(JSON.string)),
                "grant_types": ["client_credentials"],
                "scopes": ["api:client:v2"],
            ])
    }

    /// `POST /o/client/token` (form body or query: client_id, client_secret, grant_type) → 201 access token.
    func issueToken(_ request: HTTPRequest) -> HTTPResponse {
        var params = request.query
        for (name, value) in request.form { params[name] = value }
        guard let clientID = params["client_id"], let secret = params["client_secret"], let grant = params["grant_type"] else {
            return .json(400, ["error": "invalid_request"])
        }
        guard grant == "client_credentials" else { return .json(400, ["error": "unsupported_grant_type"]) }
        let now = clock.nowMillis()
        let ttl = config.accessTokenTTLSeconds
        let token: String? = state.withLock { state in
            guard let client = state.clients[clientID], client.secret == secret else { return nil }
            let value = Random.hex(24)
            state.tokens[value] = AccessToken(clientID: clientID, softwareStatement: client.softwareStatement, expiresAt: now + ttl * 1000)
            return value
        }
        guard let token else { return .json(400, ["error": "invalid_client"]) }
        return .json(
            201,
            [
                "id": .string(Random.uuid()),
                "access_token": .string(token),
                "created_at": .integer(now),
                "expires_in": .integer(ttl),
                "token_type": "bearer",
            ])
    }

    /// Three dot-separated parts whose first two are base64url JSON objects.
    static func isWellFormedJWT(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty }) else { return false }
        for part in parts.prefix(2) {
            guard let data = Base64.decodeURL(String(part)), (try? JSON.parse([UInt8](data)))?.objectValue != nil else { return false }
        }
        return true
    }
}

/// Base64 helpers (standard and URL-safe, padding optional).
enum Base64 {
    static func decode(_ text: String) -> Data? {
        var value = Trim.whitespace(text, newlines: true)
        let remainder = value.count % 4
        if remainder > 0 { value += String(repeating: "=", count: 4 - remainder) }
        return Data(base64Encoded: value)
    }

    static func decodeURL(_ text: String) -> Data? {
        decode(text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/"))
    }

    static func encode(_ text: String) -> String { Data(text.utf8).base64EncodedString() }
}
