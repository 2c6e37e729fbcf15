import AccessEnabler
import Foundation
import JSON
import JSONRPC

/// `init`, `setOptions`, `setRequestor` (DESIGN §3 "Methods").
enum LifecycleMethods {
    static let all = [initialize, setOptions, setRequestor]

    /// `init {softwareStatement?, redirectUrl?, webView?, partnerSSO?}` → `{}`: a fresh engine for this
    /// connection. `partnerSSO` is validated here; partner SSO itself comes with issue 6.
    static let initialize = MethodSpec(name: "init", needsRequestor: false) { session, params throws(ErrorObject) in
        let softwareStatement = try params.string("softwareStatement")
        let redirectURL = try params.string("redirectUrl")
        let webView = try params.bool("webView")
        _ = try params.string("partnerSSO")
        session.initialize(softwareStatement: softwareStatement, redirectURL: redirectURL, webView: webView)
        return .now(.object([:]))
    }

    /// `setOptions {applicationProfile?, visitorID?, device_info?, handleSVC?}` → `{}`; never queued.
    static let setOptions = MethodSpec(name: "setOptions", needsRequestor: false) { session, params throws(ErrorObject) in
        var options = JSONObject()
        for name in ["applicationProfile", "visitorID", "device_info"] {
            if let value = try params.string(name) { options[name] = .string(value) }
        }
        if let handleSVC = try params.bool("handleSVC") { options["handleSVC"] = .bool(handleSVC) }
        session.engine().setOptions(options)
        return .now(.object([:]))
    }

    /// `setRequestor {requestorID, serviceProviders?}` → `{status}` after setRequestorComplete. The deprecated
    /// `signedRequestorID`, `secret` and `publicKey` are accepted and ignored.
    static let setRequestor = MethodSpec(name: "setRequestor", needsRequestor: false) { session, params throws(ErrorObject) in
        let requestorID = try params.requiredString("requestorID")
        if requestorID.isEmpty { throw Params.invalid("requestorID", "must not be empty") }
        let serviceProviders = try params.stringArray("serviceProviders")?.enumerated().map { index, text throws(ErrorObject) in
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
                url.host?.isEmpty == false
            else { throw Params.invalid("serviceProviders", "item \(index) is not an http(s) URL") }
            return url
        }
        session.markRequestorSent()
        return .engine { engine in
            let status = await engine.setRequestor(requestorID, serviceProviders: serviceProviders)
            return .object(["status": .integer(Int64(status))])
        }
    }
}
