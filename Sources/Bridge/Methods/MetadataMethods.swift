import AccessEnabler
import JSON
import JSONRPC

/// `getMetadata` (Protocol/README.md).
enum MetadataMethods {
    static let all = [getMetadata]

    /// The SDK's op-code names and numbers.
    static let opCodes: [String: Int64] = [
        "METADATA_AUTHENTICATION": 0, "METADATA_AUTHORIZATION": 1, "METADATA_DEVICE_ID": 2, "METADATA_USER_META": 3,
    ]

    /// `{opCode, resource?, userMetaKey?}` → `{metadata, encrypted, key, arguments}`, `arguments` being the
    /// params as sent. `resource` is required for op code 1; op code 3 without `userMetaKey` reads the whole
    /// user metadata object.
    static let getMetadata = MethodSpec(name: "getMetadata", needsRequestor: true) { _, params throws(ErrorObject) in
        let request = try metadataRequest(params)
        let arguments = JSON.object(params.object)
        return .engine { engine in Wire.metadata(await engine.getMetadata(request, arguments: arguments)) }
    }

    static func metadataRequest(_ params: Params) throws(ErrorObject) -> MetadataRequest {
        guard let value = params.value("opCode") else {
            throw Params.invalid("opCode", "is required (a METADATA_* name or 0–3)")
        }
        let code: Int64
        switch value {
        case .string(let name):
            guard let number = opCodes[name] else {
                let upper = name.uppercased()
                let meant = opCodes[upper] != nil ? upper : "METADATA_" + upper
                let names = opCodes.sorted { $0.value < $1.value }.map(\.key).joined(separator: ", ")
                let hint = opCodes[meant] != nil ? "; did you mean '\(meant)'?" : " (it takes \(names), or 0–3)"
                throw Params.invalid("opCode", "is not a known op code: \(Text.excerpt(name))\(hint)")
            }
            code = number
        case .integer(let number) where (0...3).contains(number):
            code = number
        default:
            throw Params.invalid("opCode", "must be a METADATA_* name or an integer 0–3")
        }
        switch code {
        case 0: return .authenticationExpiry
        case 1:
            guard let resource = try params.string("resource") else {
                throw Params.invalid("resource", "is required for METADATA_AUTHORIZATION")
            }
            // As getAuthorization's: no authorization is ever had for an empty resource.
            if resource.isEmpty { throw Params.invalid("resource", "must not be empty") }
            return .authorizationExpiry(resource: resource)
        case 2: return .deviceID
        default:
            guard let key = try params.string("userMetaKey") else { return .userMetadataObject }
            return .userMetadata(key: key)
        }
    }
}
