import AccessEnabler
import Glibc
import JSON
import JSONRPC

/// `init`, `setOptions`, `setRequestor` (Protocol/README.md).
enum LifecycleMethods {
    static let all = [initialize, setOptions, setRequestor]

    /// `init {softwareStatement?, redirectUrl?, webView?, partnerSSO?, deviceIdentifier?, deviceInfo?, forwardedFor?,
    /// subjectToken?, serviceToken?}` → `{}`: a fresh engine for this connection. With `partnerSSO` (e.g. `Apple`) the engine asks this host the
    /// `partnerSSO/*` requests (`PartnerSSOHost`); without it the host never receives a request. With
    /// `deviceIdentifier` the instance acts for that device (server-to-server; Protocol/README.md "Fleet mode").
    /// `subjectToken` and `serviceToken` (non-empty) are the single sign-on tokens sent as `Adobe-Subject-Token`
    /// and `AD-Service-Token` (Protocol/README.md, "Single sign-on by platform identity and by service token").
    static let initialize = MethodSpec(name: "init", needsRequestor: false) { instance, params throws(ErrorObject) in
        let softwareStatement = try params.string("softwareStatement")
        let redirectURL = try params.string("redirectUrl")
        if let redirectURL, !RedirectURL.isValid(redirectURL) {
            throw Params.invalid("redirectUrl", "must be an absolute URL with a host and no space, such as adobepass://ios.app")
        }
        let webView = try params.bool("webView")
        let partnerSSO = try params.string("partnerSSO")
        if let partnerSSO, partnerSSO != "Apple" {
            // REST API V2's one partner (its sessions/sso/{partner} path); any other failed later, saying nothing.
            let near = Text.near(partnerSSO, in: ["Apple"]).map { "; did you mean '\($0)'?" } ?? ""
            throw Params.invalid("partnerSSO", "is not a partner of Adobe Pass REST API V2 (it has Apple)\(near)")
        }
        let device = try hostedDevice(params)
        var singleSignOn = SingleSignOnTokens()
        for (name, token) in [("subjectToken", \SingleSignOnTokens.subjectToken), ("serviceToken", \SingleSignOnTokens.serviceToken)] {
            let value = try params.headerValue(name)
            if value?.isEmpty == true { throw Params.invalid(name, "must not be empty") }
            singleSignOn[keyPath: token] = value
        }
        let svcRedirectURL = try params.string("svcRedirectUrl")
        if let svcRedirectURL, !RedirectURL.isValid(svcRedirectURL) {
            throw Params.invalid("svcRedirectUrl", "must be an absolute URL with a host and no space, such as myapp://svc")
        }
        let storageCheck = try params.string("storageCheck").map { name throws(ErrorObject) in
            guard let check = StorageCheck(rawValue: name) else { throw Params.invalid("storageCheck", "must be none, all or clear") }
            return check
        }
        instance.initialize(
            InitSettings(
                softwareStatement: softwareStatement, redirectURL: redirectURL, webView: webView, partnerSSO: partnerSSO, device: device,
                singleSignOn: singleSignOn, svcMVPDs: try params.stringArray("svcMVPDs").map(Set.init), svcRedirectURL: svcRedirectURL,
                storageCheck: storageCheck))
        return .now(.object([:]))
    }

    /// The longest `deviceIdentifier`, in characters (Unicode scalars, as JSON Schema's `maxLength` counts): at most
    /// 1 KiB in UTF-8, so that a login's key fits in a PostgreSQL index row (2704 bytes) beside the others.
    static let maxDeviceIdentifierLength = 256

    /// `deviceIdentifier` (non-empty, at most `maxDeviceIdentifierLength` characters), `deviceInfo` (base64 of a
    /// JSON object) and `forwardedFor` (an IPv4 or IPv6 address); the last two only with the first.
    static func hostedDevice(_ params: Params) throws(ErrorObject) -> HostedDevice? {
        let identifier = try params.string("deviceIdentifier")
        let info = try params.string("deviceInfo")
        let address = try params.string("forwardedFor")
        guard let identifier else {
            if info != nil { throw Params.invalid("deviceInfo", "needs deviceIdentifier") }
            if address != nil { throw Params.invalid("forwardedFor", "needs deviceIdentifier") }
            return nil
        }
        if identifier.isEmpty { throw Params.invalid("deviceIdentifier", "must not be empty") }
        if identifier.unicodeScalars.count > maxDeviceIdentifierLength {
            throw Params.invalid("deviceIdentifier", "must be at most \(maxDeviceIdentifierLength) characters")
        }
        if let info {
            guard let bytes = Base64.decode(info), (try? JSON.parse(bytes))?.objectValue != nil else {
                throw Params.invalid("deviceInfo", "must be base64 of a JSON object")
            }
        }
        if let address, !isIPAddress(address) { throw Params.invalid("forwardedFor", "must be an IPv4 or IPv6 address") }
        return HostedDevice(identifier: identifier, info: info, address: address)
    }

    static func isIPAddress(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }

    /// `setOptions {applicationProfile?, visitorID?, device_info?, handleSVC?}` → `{}`; never queued. The keys are
    /// `Options.stringKeys` and `Options.boolKeys`; any other name was refused with -32602 before this runs
    /// (`ParamNames`).
    static let setOptions = MethodSpec(name: "setOptions", needsRequestor: false) { instance, params throws(ErrorObject) in
        var options = JSONObject()
        for name in Options.stringKeys {
            // visitorID and device_info go out as header values; applicationProfile as a percent-encoded query.
            let value = name == "applicationProfile" ? try params.string(name) : try params.headerValue(name)
            if let value { options[name] = .string(value) }
        }
        for name in Options.boolKeys {
            if let value = try params.bool(name) { options[name] = .bool(value) }
        }
        instance.engine().setOptions(options)
        return .now(.object([:]))
    }

    /// `setRequestor {requestorID, serviceProviders?}` → `{status}` after setRequestorComplete. The deprecated
    /// `signedRequestorID`, `secret` and `publicKey` are accepted and ignored.
    static let setRequestor = MethodSpec(name: "setRequestor", needsRequestor: false) { instance, params throws(ErrorObject) in
        let requestorID = try params.requiredString("requestorID")
        if requestorID.isEmpty { throw Params.invalid("requestorID", "must not be empty") }
        let listed = try params.stringArray("serviceProviders")
        if let listed, listed.count > maxServiceProviders {
            throw Params.invalid("serviceProviders", "lists \(listed.count) URLs, more than \(maxServiceProviders)")
        }
        let serviceProviders = try listed?.enumerated().map { index, text throws(ErrorObject) in
            guard let url = try? BackendURL(text) else {
                throw Params.invalid("serviceProviders", "item \(index) is not an https URL, nor an http URL on a loopback host")
            }
            return url
        }
        return .engineAnsweringEarly { engine, answer in
            // Answered before the calls that waited for it run, so their notifications follow the response.
            _ = await engine.setRequestor(requestorID, serviceProviders: serviceProviders) { outcome in
                if outcome.status != AccessEnablerStatus.success {
                    // R400 is the daemon's own registration (no software statement, a refused one): the operator's
                    // to fix, at the level `journalctl -p warning` shows. Other reasons are the host's or Adobe's.
                    let line = "setRequestor \(Text.excerpt(requestorID)) failed: \(Wire.summary(outcome.statuses))"
                    if outcome.statuses.contains(where: { $0.id == "R400" }) { log.warning(line) } else { log.info(line) }
                }
                answer(Wire.requestor(outcome))
            }
        }
    }

    /// The most backend URLs one setRequestor may ask at once (Protocol/README.md, "Limits").
    static let maxServiceProviders = 16

    static let log = Logger(label: "bridge")
}
