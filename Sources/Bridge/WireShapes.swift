import AccessEnabler
import JSON

/// JSON shapes of the engine's values on the wire (Protocol/README.md).
enum Wire {
    /// `{ID, displayName, logoURL, enablePlatformServices, boardingStatus, displayInPlatformPicker,
    /// platformMappingId, isTempPass, requiresSVC}`; absent strings are null, absent flags false.
    /// One per MVPD in `displayProviderDialog`: a requestor may list hundreds.
    static func mvpd(_ mvpd: MVPD) -> JSON {
        .object(
            JSONObject(distinct: [
                ("ID", .string(mvpd.ID)),
                ("displayName", .string(mvpd.displayName)),
                ("logoURL", optional(mvpd.logoURL)),
                ("enablePlatformServices", .bool(mvpd.enablePlatformServices)),
                ("boardingStatus", optional(mvpd.boardingStatus)),
                ("displayInPlatformPicker", .bool(mvpd.displayInPlatformPicker)),
                ("platformMappingId", optional(mvpd.platformMappingId)),
                ("isTempPass", .bool(mvpd.isTempPass)),
                ("requiresSVC", .bool(mvpd.requiresSVC)),
            ]))
    }

    /// An MVPD object or null.
    static func mvpd(_ mvpd: MVPD?) -> JSON { mvpd.map { Wire.mvpd($0) } ?? .null }

    /// `{status, errorCode}` as in setAuthenticationStatus, plus `statuses` when the outcome has reasons
    /// (Protocol/README.md "Failure reasons"; a callback's params never have them).
    static func authentication(_ status: AuthenticationStatus) -> JSON {
        var object: JSONObject = ["status": .integer(Int64(status.status)), "errorCode": .string(status.errorCode)]
        addReasons(status.statuses, to: &object)
        return .object(object)
    }

    /// `{status}` as in setRequestorComplete, plus `statuses` when it failed with reasons.
    static func requestor(_ outcome: RequestorStatus) -> JSON {
        var object: JSONObject = ["status": .integer(Int64(outcome.status))]
        addReasons(outcome.statuses, to: &object)
        return .object(object)
    }

    /// `{token, resource}` as in setToken, or `{resource, errorCode, errorDescription}` as in tokenRequestFailed;
    /// plus `statuses` when the failure has reasons, or the token an advisory status (the result's only).
    static func authorization(_ outcome: AuthorizationOutcome) -> JSON {
        switch outcome {
        case .token(let token, let resource, let statuses):
            var object: JSONObject = ["token": .string(token), "resource": .string(resource)]
            addReasons(statuses, to: &object)
            return .object(object)
        case .failed(let resource, let errorCode, let errorDescription, let statuses):
            var object: JSONObject = [
                "resource": .string(resource), "errorCode": .string(errorCode),
                "errorDescription": .string(errorDescription),
            ]
            addReasons(statuses, to: &object)
            return .object(object)
        }
    }

    /// `{metadata, expires?, encrypted, key, arguments}` as in setMetadataStatus, plus `statuses` when metadata is
    /// null because something failed.
    static func metadata(_ status: MetadataStatus) -> JSON {
        var object: JSONObject = [
            "metadata": status.metadata, "encrypted": .bool(status.encrypted),
            "key": .integer(Int64(status.key)), "arguments": status.arguments,
        ]
        if let expires = status.expires { object["expires"] = .integer(expires) }
        addReasons(status.statuses, to: &object)
        return .object(object)
    }

    /// A result's `statuses`, its reasons, when it has any (Protocol/README.md "Failure reasons").
    private static func addReasons(_ statuses: [AdvancedStatus], to object: inout JSONObject) {
        if !statuses.isEmpty { object["statuses"] = .array(statuses.map { Wire.status($0) }) }
    }

    /// `{status?, decisions: [{id, authorized, error?}]}`, each error `{status, code, message?, details?, action}`.
    static func preauthorize(_ response: PreauthorizeResponse) -> JSON {
        func error(_ error: PreauthorizeError) -> JSON {
            var object: JSONObject = [
                "status": .integer(Int64(error.status)), "code": .string(error.code), "action": .string(error.action),
            ]
            if let message = error.message { object["message"] = .string(message) }
            if let details = error.details { object["details"] = .string(details) }
            return .object(object)
        }
        // `status` first: a reader without a JSON parser (Clients/shell/passbridge-call) tells a failed call by its start.
        var object: JSONObject = [:]
        if let status = response.status { object["status"] = error(status) }
        object["decisions"] = .array(
            response.decisions.map { decision in
                var item: JSONObject = ["id": .string(decision.id), "authorized": .bool(decision.authorized)]
                if let failure = decision.error { item["error"] = error(failure) }
                return .object(item)
            })
        return .object(object)
    }

    /// `{resources}` as in preauthorizedResources, plus `statuses` (the result's only) when something said why it
    /// may be short.
    static func preauthorized(_ outcome: PreauthorizedResources) -> JSON {
        var object: JSONObject = ["resources": .array(outcome.resources.map { .string($0) })]
        addReasons(outcome.statuses, to: &object)
        return .object(object)
    }

    /// The advanced status dictionary: `{id, errorId (the same, iOS's name), level}` plus whichever of message, details, resource, code, url,
    /// authenticateUrl, activationUrl, notAfter (epoch ms), secondsLeft the engine set (Protocol/README.md,
    /// "Values").
    static func status(_ status: AdvancedStatus) -> JSON {
        var object: JSONObject = ["id": .string(status.id), "errorId": .string(status.id), "level": .string(status.level)]
        if let message = status.message { object["message"] = .string(message) }
        if let details = status.details { object["details"] = .string(details) }
        if let resource = status.resource { object["resource"] = .string(resource) }
        if let code = status.code { object["code"] = .string(code) }
        if let url = status.url { object["url"] = .string(url) }
        if let authenticate = status.authenticateURL { object["authenticateUrl"] = .string(authenticate) }
        if let activation = status.activationURL { object["activationUrl"] = .string(activation) }
        if let notAfter = status.notAfter { object["notAfter"] = .integer(notAfter) }
        if let secondsLeft = status.secondsLeft { object["secondsLeft"] = .integer(secondsLeft) }
        return .object(object)
    }

    static func optional(_ value: String?) -> JSON { value.map { .string($0) } ?? .null }

    /// `ID message (details)` of each status, joined by "; " (for log lines); "no reason given" when none.
    static func summary(_ statuses: [AdvancedStatus]) -> String {
        guard !statuses.isEmpty else { return "no reason given" }
        return statuses.map { status in
            var text = status.id
            if let message = status.message { text += " \(message)" }
            if let details = status.details { text += " (\(details))" }
            return text
        }.joined(separator: "; ")
    }
}
