import AccessEnabler
import Foundation
import JSON
import JSONRPC

/// `init`, `setOptions`, `setRequestor` (DESIGN §3 "Methods").
enum LifecycleMethods {
    static let all = [initialize, setOptions, setRequestor]

    /// `init {softwareStatement?, redirectUrl?, webView?, partnerSSO?}` → `{}`: a fresh engine for this
    /// connection. With `partnerSSO` (e.g. `Apple`) the engine asks this host the `partnerSSO/*` requests
    /// (issue 6, `PartnerSSOHost`); without it the host never receives a request.
    static let initialize = MethodSpec(name: "init", needsRequestor: false) { session, params throws(ErrorObject) in
        let softwareStatement = try params.string("softwareStatement")
        let redirectURL = try params.string("redirectUrl")
        if let redirectURL, !isAbsoluteURL(redirectURL) {
            throw Params.invalid("redirectUrl", "must be an absolute URL such as adobepass://ios.app")
        }
        let webView = try params.bool("webView")
        let partnerSSO = try params.string("partnerSSO")
        if partnerSSO?.isEmpty == true { throw Params.invalid("partnerSSO", "must not be empty") }
        session.initialize(softwareStatement: softwareStatement, redirectURL: redirectURL, webView: webView, partnerSSO: partnerSSO)
        return .now(.object([:]))
    }

    /// A URL with a scheme and a host (`adobepass://ios.app`, `https://example.com/done`): what a login page can
    /// redirect to and `handleExternalURL` can compare.
    static func isAbsoluteURL(_ text: String) -> Bool {
        guard let url = URL(string: text), url.scheme?.isEmpty == false, url.host?.isEmpty == false else { return false }
        return true
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
