import JSON
import JSONRPC

/// The request a response answers, as far as the reason of a failure needs it.
struct AnsweredRequest: Sendable {
    let method: String
    let params: Params
}

extension ApplicationInstance {
    static let log = Logger(label: "bridge")

    /// `result` with the reasons of a failed outcome added as `statuses` (Protocol/README.md "Failure reasons"):
    /// the warning and error `status` notifications the call's outcome sent; when it sent none, those of the
    /// instance's failed setRequestor, or the daemon's own `PB404` when the login ended because setSelectedProvider
    /// named an id the provider dialog did not offer (on that call and on the getAuthentication or
    /// getAuthorization the login belonged to).
    /// Logs every failed setRequestor at info with its reasons.
    func explain(_ result: JSON, of request: AnsweredRequest, statuses: [JSON]) -> JSON {
        guard OutcomeStatuses.isFailure(result) else {
            if request.method == LifecycleMethods.setRequestor.name { setRequestorFailure = nil }
            return result
        }
        var reasons = statuses
        switch request.method {
        case LifecycleMethods.setRequestor.name:
            setRequestorFailure = statuses
            let requestor = request.params.object["requestorID"]?.stringValue ?? ""
            Self.log.info("setRequestor \(requestor) failed: \(reasons.isEmpty ? "no reason given" : Self.summary(reasons))")
        case AuthenticationMethods.setSelectedProvider.name, AuthenticationMethods.getAuthentication.name,
            AuthorizationMethods.getAuthorization.name:
            if reasons.isEmpty, setRequestorFailure == nil, let miss = takeProviderMiss() {
                reasons = [miss]
            } else if reasons.isEmpty {
                reasons = setRequestorFailure ?? []
            }
        default:
            if reasons.isEmpty { reasons = setRequestorFailure ?? [] }
        }
        return OutcomeStatuses.attach(reasons, to: result)
    }

    /// `PB404` for an MVPD id the last provider dialog did not offer, naming the offered id near it when there is
    /// one (``ParamNames/near(_:in:)``); nil when it was offered or no dialog was shown.
    func unknownMVPD(_ mvpdId: String) -> JSON? {
        let offered = offeredMVPDs
        guard !offered.isEmpty, !offered.contains(mvpdId) else { return nil }
        let suggestion = ParamNames.near(mvpdId, in: offered).map { "; did you mean '\($0)'?" } ?? ""
        return .object([
            "id": "PB404", "level": "error",
            "message": .string("No MVPD '\(mvpdId)' in the provider dialog\(suggestion)"),
            "details": .string("The dialog offered: \(offered.joined(separator: ", "))"),
        ])
    }

    /// `ID message (details)` of each status, joined by "; ".
    static func summary(_ statuses: [JSON]) -> String {
        statuses.map { status in
            var text = status["id"]?.stringValue ?? "?"
            if let message = status["message"]?.stringValue { text += " \(message)" }
            if let details = status["details"]?.stringValue { text += " (\(details))" }
            return text
        }.joined(separator: "; ")
    }
}
