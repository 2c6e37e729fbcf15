import AccessEnabler
import JSON
import JSONRPC

/// The authorization family: checkPreauthorizedResources, preauthorize, checkAuthorization, getAuthorization
/// (Protocol/README.md).
enum AuthorizationMethods {
    static let all = [checkPreauthorizedResources, preauthorize, checkAuthorization, getAuthorization]

    /// `{resources, disableFeatures?}` → `{status?, decisions: [{id, authorized, error?}]}` (the iOS SDK's
    /// `preauthorize`). `LOCAL_CACHE` asks the backend even for known permits; `REMOTE_CACHE` is refused: REST API V2
    /// has no server-side cache a client can turn off.
    static let preauthorize = MethodSpec(name: "preauthorize", needsRequestor: true) { _, params throws(ErrorObject) in
        let resources = try resourceList(params)
        let features = try params.stringArray("disableFeatures") ?? []
        for feature in features where feature != "LOCAL_CACHE" {
            throw Params.invalid(
                "disableFeatures",
                feature == "REMOTE_CACHE"
                    ? "REMOTE_CACHE cannot be disabled: REST API V2 keeps no server-side cache a client can turn off"
                    : "\(Text.excerpt(feature)) is not a feature (LOCAL_CACHE, REMOTE_CACHE)")
        }
        let localCache = !features.contains("LOCAL_CACHE")
        return .engine { engine in Wire.preauthorize(await engine.preauthorize(resources, localCache: localCache)) }
    }

    /// `{resources, cache?}` → `{resources}` as in preauthorizedResources.
    static let checkPreauthorizedResources = MethodSpec(name: "checkPreauthorizedResources", needsRequestor: true) {
        _, params throws(ErrorObject) in
        let resources = try resourceList(params)
        let cache = try params.bool("cache") ?? true
        return .engine { engine in Wire.preauthorized(await engine.checkPreauthorizedResources(resources, cache: cache)) }
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

    /// `resources`: an array of resource ids, none empty (an empty one would be asked of the backend as is).
    static func resourceList(_ params: Params) throws(ErrorObject) -> [String] {
        let resources = try params.requiredStringArray("resources")
        if let empty = resources.firstIndex(of: "") { throw Params.invalid("resources", "item \(empty) must not be empty") }
        return resources
    }

    /// `resource` (plain id or MRSS, passed on byte-exact, not empty) and `data?`.
    static func authorizationParams(_ params: Params) throws(ErrorObject) -> (String, JSONObject?) {
        let resource = try params.requiredString("resource")
        if resource.isEmpty { throw Params.invalid("resource", "must not be empty") }
        return (resource, try params.object("data"))
    }
}
