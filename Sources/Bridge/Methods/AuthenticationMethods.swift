import AccessEnabler
import JSON
import JSONRPC

/// The login family: checkAuthentication, getAuthentication, setSelectedProvider, handleExternalURL,
/// getAuthenticationToken, logout, getSelectedProvider (Protocol/README.md).
enum AuthenticationMethods {
    static let all = [
        checkAuthentication, getAuthentication, setSelectedProvider, handleExternalURL, getAuthenticationToken, logout,
        getSelectedProvider,
    ]

    /// → `{status, errorCode}` (local state only).
    static let checkAuthentication = MethodSpec(name: "checkAuthentication", needsRequestor: true) { _, _ in
        .engine { engine in Wire.authentication(await engine.checkAuthentication()) }
    }

    /// `{forceAuthn?, data?, filter?}` → `{status, errorCode}` when the login flow ends. `filter`: an array of MVPD
    /// ids, or `{TV_PROVIDERS?, FEATURED_TV_PROVIDERS?}` (SDK v2.4+); it narrows the platform's picker only.
    static let getAuthentication = MethodSpec(name: "getAuthentication", needsRequestor: true) { _, params throws(ErrorObject) in
        let forceAuthn = try params.bool("forceAuthn") ?? false
        let data = try params.object("data")
        let filter = try params.providerFilter("filter")
        return .engine { engine in
            Wire.authentication(await engine.getAuthentication(forceAuthn: forceAuthn, data: data, filter: filter))
        }
    }

    /// `{mvpdId: string|null}` → `{}` once the login started, or `{status, errorCode}` when the call ended the
    /// flow itself (TempPass, null, unknown id). The engine runs it at once, but with no login in progress behind
    /// a setRequestor in flight (`Engine.setSelectedProvider`).
    static let setSelectedProvider = MethodSpec(name: "setSelectedProvider", needsRequestor: true) { _, params throws(ErrorObject) in
        let mvpdId = try params.requiredNullableString("mvpdId")
        return .engine { engine in
            switch await engine.setSelectedProvider(mvpdId) {
            case .started: return .object([:])
            case .ended(let status): return Wire.authentication(status)
            }
        }
    }

    /// `{url}` → `{status, errorCode}` of the flow it completes; a URL other than the redirect URL → -32602.
    static let handleExternalURL = MethodSpec(name: "handleExternalURL", needsRequestor: true) { instance, params throws(ErrorObject) in
        let url = try params.requiredString("url")
        // A param's wrong value is -32602 with or without a requestor (Protocol/README.md, Lifecycle 3); the URL checked
        // here, the flow is completed as getAuthenticationToken completes it (no second parse of the URL).
        let engine = instance.engine()
        guard engine.isRedirectURL(url) else {
            let urls = engine.redirectURLs.map(Text.excerpt)
            let expected = urls.count > 1 ? "\(urls[0]), or \(urls[1]) for an MVPD that uses SVC" : urls[0]
            throw Params.invalid(
                "url", "is not the redirect URL, \(expected) (init's redirectUrl, else --redirect-url; scheme, host and path must match)")
        }
        return .engine { engine in Wire.authentication(await engine.getAuthenticationToken()) }
    }

    /// Deprecated alias of completing the pending flow → `{status, errorCode}`.
    static let getAuthenticationToken = MethodSpec(name: "getAuthenticationToken", needsRequestor: true) { _, _ in
        .engine { engine in Wire.authentication(await engine.getAuthenticationToken()) }
    }

    /// → `{status: 0, errorCode: "User Not Authenticated Error"}` after the logout page's handleExternalURL or
    /// the engine's logout timeout.
    static let logout = MethodSpec(name: "logout", needsRequestor: true) { _, _ in
        .engine { engine in Wire.authentication(await engine.logout()) }
    }

    /// → `{mvpd}` (an MVPD object or null) after the selectedProvider notification; never queued.
    static let getSelectedProvider = MethodSpec(name: "getSelectedProvider", needsRequestor: false) { instance, _ in
        .now(.object(["mvpd": Wire.mvpd(instance.engine().getSelectedProvider())]))
    }
}
