import JSON

/// What tests switch on at run time through `/__admin/limits`, `/__admin/degradation` and `/__admin/item-errors`
/// (README.md next to this file, "Rules"), over the configuration; `/__admin/reset` removes every rule.
struct Rules {
    /// Most resources per authorize / preauthorize call, replacing every service provider's configured limit
    /// (0 = no limit); nil keeps the configuration's.
    var maxAuthorizeResources: Int?
    var maxPreauthorizeResources: Int?
    /// MVPD id → degradation rule (`AuthNAll`, `AuthZAll`, `AuthZNone`), applied to that MVPD under every
    /// service provider as a rule applied through Adobe's Degradation API would be.
    var degradations: [String: String] = [:]
    /// Resource (the exact string) → the item-level error its next decisions carry, and how many are left.
    var itemErrors: [ResourceKey: (code: String, remaining: Int)] = [:]

    /// `provider` with the limits and degradation rules in force.
    func apply(to provider: ServiceProviderConfig) -> ServiceProviderConfig {
        var provider = provider
        if let maxAuthorizeResources { provider.maxAuthorizeResources = maxAuthorizeResources }
        if let maxPreauthorizeResources { provider.maxPreauthorizeResources = maxPreauthorizeResources }
        for index in provider.mvpds.indices {
            if let rule = degradations[provider.mvpds[index].id] { provider.mvpds[index].degradation = rule }
        }
        return provider
    }

    /// The item-level error code for `resource`'s next decision, if one is pending (counts it down).
    mutating func takeItemError(for resource: String) -> String? {
        let key = ResourceKey(resource)
        guard let pending = itemErrors[key] else { return nil }
        itemErrors[key] = pending.remaining > 1 ? (pending.code, pending.remaining - 1) : nil
        return pending.code
    }

    static let degradationRules = ["AuthNAll", "AuthZAll", "AuthZNone"]
}

/// One REST V2 or DCR call as received, for `GET /__admin/requests`: never its headers, nor a body other than a
/// decision's resources (they carry credentials).
struct LoggedRequest {
    var method: String
    var path: String
    /// The query, decoded (name → value).
    var query: [String: String]
    /// The `resources` of a decisions call, as sent.
    var resources: [String]?

    var json: JSON {
        var decoded = JSONObject()
        for (name, value) in query.sorted(by: { $0.key < $1.key }) { decoded[name] = .string(value) }
        var object: JSONObject = ["method": .string(method), "path": .string(path), "query": .object(decoded)]
        if let resources { object["resources"] = .array(resources.map { .string($0) }) }
        return .object(object)
    }
}

extension Emulator {
    /// `/__admin/limits`, `/__admin/degradation`, `/__admin/item-errors`, `/__admin/requests`; nil for other calls.
    func routeRules(_ request: HTTPRequest, _ parts: [String], body: () throws(Failure) -> JSON) throws(Failure) -> HTTPResponse? {
        switch (request.method, parts) {
        case ("POST", ["limits"]):
            let json = try body()
            var limits: [Int?] = []
            for name in ["maxAuthorizeResources", "maxPreauthorizeResources"] {
                guard let value = json[name], !value.isNull else {
                    limits.append(nil)
                    continue
                }
                guard let number = value.intValue, number >= 0 else {
                    return .json(400, ["error": .string("\(name) must be a non-negative integer or null")])
                }
                limits.append(number)
            }
            let rules = state.withLock { state in
                state.rules.maxAuthorizeResources = limits[0]
                state.rules.maxPreauthorizeResources = limits[1]
                return state.rules
            }
            return .json(
                200,
                [
                    "maxAuthorizeResources": rules.maxAuthorizeResources.map { .integer(Int64($0)) } ?? .null,
                    "maxPreauthorizeResources": rules.maxPreauthorizeResources.map { .integer(Int64($0)) } ?? .null,
                ])
        case ("POST", ["degradation"]):
            let json = try body()
            guard let mvpd = json["mvpd"]?.stringValue, config.serviceProviders.contains(where: { $0.mvpd(mvpd) != nil }) else {
                return .json(400, ["error": "mvpd must name a configured MVPD"])
            }
            let rule = json["rule"]?.stringValue
            if let rule, !Rules.degradationRules.contains(rule) {
                return .json(400, ["error": "rule must be AuthNAll, AuthZAll, AuthZNone or null"])
            }
            if rule == nil, json["rule"]?.isNull != true {
                return .json(400, ["error": "rule must be AuthNAll, AuthZAll, AuthZNone or null"])
            }
            state.withLock { $0.rules.degradations[mvpd] = rule }
            return .json(200, ["mvpd": .string(mvpd), "rule": rule.map { .string($0) } ?? .null])
        case ("POST", ["item-errors"]):
            let json = try body()
            guard let resource = json["resource"]?.stringValue, let code = json["code"]?.stringValue,
                EnhancedError.table[code] != nil
            else {
                let known = JSON.array(EnhancedError.table.keys.sorted().map { .string($0) })
                return .json(400, ["error": "expected {resource, code, count?} with a known enhanced error code", "known": known])
            }
            var count = 1
            if let given = json["count"], !given.isNull { count = given.intValue ?? 0 }
            guard count >= 1 else { return .json(400, ["error": "count must be a positive integer (or absent: 1)"]) }
            state.withLock { $0.rules.itemErrors[ResourceKey(resource)] = (code, count) }
            return .json(
                201,
                [
                    "resource": .string(resource), "code": .string(code), "count": .integer(Int64(count)),
                    "error": EnhancedError.object(code),
                ])
        case ("GET", ["requests"]):
            return .json(200, ["requests": .array(state.withLock { $0.requests.map(\.json) })])
        default:
            return nil
        }
    }

    /// How many calls `GET /__admin/requests` keeps (the latest), so that a long-running emulator stays small.
    static let requestLogLimit = 10_000

    /// Records a REST V2 or DCR call for `GET /__admin/requests` (admin and browser pages are not recorded).
    func record(_ request: HTTPRequest) {
        guard request.path.hasPrefix("/api/v2/") || request.path.hasPrefix("/o/") else { return }
        var resources: [String]?
        let path = Array(request.path.utf8)
        let marker = Array("/decisions/".utf8)
        let decisions =
            path.count >= marker.count
            && (0...(path.count - marker.count)).contains { path[$0..<($0 + marker.count)].elementsEqual(marker) }
        if decisions, let body = try? JSON.parse(request.body) {
            resources = body["resources"]?.arrayValue?.compactMap(\.stringValue)
        }
        let entry = LoggedRequest(method: request.method, path: request.path, query: request.query, resources: resources)
        state.withLock { state in
            state.requests.append(entry)
            if state.requests.count > Self.requestLogLimit { state.requests.removeFirst(state.requests.count - Self.requestLogLimit) }
        }
    }
}
