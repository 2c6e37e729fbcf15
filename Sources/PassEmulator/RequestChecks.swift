import Foundation
import JSON

/// What a validated REST V2 call knows about its caller.
struct Caller {
    var clientID: String
    var serviceProvider: ServiceProviderConfig
    /// The `AP-Device-Identifier` value after `fingerprint ` (nil when not sent and not required).
    var deviceID: String?
    /// The decoded `X-Device-Info` object (nil when not sent and not required).
    var deviceInfo: JSON?
    var now: Int64

    var profileKey: IssuedProfileKey? {
        deviceID.map { IssuedProfileKey(clientID: clientID, serviceProvider: serviceProvider.id, deviceID: $0) }
    }
}

// Validation in this order, as Adobe's endpoints answer: bearer (401), service provider (400), headers (400).
extension Emulator {
    /// Checks `Authorization`, the service provider and, when `device` is true, `AP-Device-Identifier` and
    /// `X-Device-Info` (both required). When `device` is false, headers that are sent are still parsed leniently.
    func caller(_ request: HTTPRequest, _ sp: String, device: Bool) throws(Failure) -> Caller {
        let now = clock.nowMillis()
        guard let authorization = request.header("authorization"), authorization.lowercased().hasPrefix("bearer ") else {
            throw Failure("invalid_access_token_client_application")
        }
        let value = Trim.whitespace(String(authorization.dropFirst(7)))
        guard let token = state.withLock({ $0.tokens[value] }), token.expiresAt > now else {
            throw Failure("invalid_access_token_client_application")
        }
        guard let configured = config.serviceProvider(sp) else {
            // The ids this caller's software statement may use, so that a client can say which one was meant.
            let known = config.serviceProviders.filter {
                $0.softwareStatements.isEmpty || $0.softwareStatements.contains(token.softwareStatement)
            }
            throw Failure(
                "invalid_parameter_service_provider", details: "Known service providers: " + known.map(\.id).joined(separator: ", "))
        }
        let provider = state.withLock { $0.rules.apply(to: configured) }
        if !provider.softwareStatements.isEmpty, !provider.softwareStatements.contains(token.softwareStatement) {
            throw Failure("invalid_access_token_service_provider")
        }
        var caller = Caller(clientID: token.clientID, serviceProvider: provider, deviceID: nil, deviceInfo: nil, now: now)
        let identifier = request.header("ap-device-identifier")
        if device || identifier != nil {
            guard let identifier, let parsed = Self.deviceIdentifier(identifier) else {
                if device { throw Failure("invalid_header_device_identifier") }
                return caller
            }
            caller.deviceID = parsed
        }
        let info = request.header("x-device-info")
        if device || info != nil {
            guard let info, let parsed = Self.deviceInfo(info) else {
                if device { throw Failure("invalid_header_device_info") }
                return caller
            }
            caller.deviceInfo = parsed
        }
        return caller
    }

    /// `fingerprint <base64>` → the base64 text; nil when malformed.
    static func deviceIdentifier(_ header: String) -> String? {
        let parts = Trim.whitespace(header).split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "fingerprint", let data = Base64.decode(String(parts[1])), !data.isEmpty else {
            return nil
        }
        return String(parts[1])
    }

    /// base64 of a JSON object → the object; nil when malformed.
    static func deviceInfo(_ header: String) -> JSON? {
        guard let data = Base64.decode(header) ?? Base64.decodeURL(header), let json = try? JSON.parse([UInt8](data)),
            json.objectValue != nil
        else { return nil }
        return json
    }

    /// The MVPD `id` of `sp`, or a 400 `invalid_parameter_mvpd`.
    func mvpd(_ id: String, of sp: ServiceProviderConfig) throws(Failure) -> MVPDConfig {
        guard let mvpd = sp.mvpd(id) else { throw Failure("invalid_parameter_mvpd") }
        return mvpd
    }
}
