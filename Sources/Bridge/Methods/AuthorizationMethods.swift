import AccessEnabler
import JSON
import JSONRPC

/// The authorization family: checkPreauthorizedResources, checkAuthorization, getAuthorization (Protocol/README.md).
enum AuthorizationMethods {
    static let all = [checkPreauthorizedResources, checkAuthorization, getAuthorization]

    /// `{resources, cache?}` → `{resources}` as in preauthorizedResources.
    static let checkPreauthorizedResources = MethodSpec(name: "checkPreauthorizedResources", needsRequestor: true) {
        _, params throws(ErrorObject) in
        let resources = try params.requiredStringArray("resources")
        let cache = try params.bool("cache") ?? true
        return .engine { engine in Wire.resources(await engine.checkPreauthorizedResources(resources, cache: cache)) }
    }

    /// `{resource, data?}` → `{token, resource}` or `{resource, errorCode, errorDescription}`.
    static let checkAuthorization = MethodSpec(name: "checkAuthorization", needsRequestor: true) { _, params throws(ErrorObject) in
        let (resource, data) = try authorizationParams(params)
        return .engine { engine in Wire.authorization(await engine.checkAuthorization(resource, data: data)) }
    }

    /// As checkAuthorization, running the login first when needed.
    static let getAuthorization = MethodSpec(name: "getAuthorization", needsRequestor: true) { _, params throws(ErrorObject) in
        let (resource, data) = try authorizationParams(params)
        return .engine { engine in Wire.authorization(await engine.getAuthorization(resource, data: data)) }
    }

    /// `resource` (plain id or MRSS, passed on byte-exact, not empty) and `data?`.
    static func authorizationParams(_ params: Params) throws(ErrorObject) -> (String, JSONObject?) {
        let resource = try params.requiredString("resource")
        if resource.isEmpty { throw Params.invalid("resource", "must not be empty") }
        return (resource, try params.object("data"))
    }
}
