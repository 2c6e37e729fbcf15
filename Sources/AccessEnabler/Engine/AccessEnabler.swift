import JSON

/// The entitlement engine's API: Adobe's AccessEnabler calls over REST API V2 + DCR (ARCHITECTURE.md), declared
/// here only. `Engine` implements it; the bridge's unit tests drive the bridge with a scripted conformer.
///
/// One instance per application instance. Each operation calls the delegate's callbacks synchronously, in the
/// SDK's order (Adobe's "iOS/tvOS API Reference"), and returns its terminal outcome only after every callback of that
/// outcome has been delivered. The calls of `WaitingCall` made while setRequestor is in flight wait and run in
/// order afterwards. The others never wait: setSelectedProvider, handleExternalURL and getAuthenticationToken
/// complete the login in progress under the requestor it started with, even during a repeated setRequestor.
///
/// Callback order of one outcome: the terminal callback (setRequestorComplete, setAuthenticationStatus,
/// setToken, tokenRequestFailed, preauthorizedResources, setMetadataStatus), then its sendTrackingData, then
/// its `status`. Backend failures end every call with exactly one terminal callback:
/// - setRequestor: setRequestorComplete(0) + status R400 (statement refused), R401 (no access token),
///   CFG404 (timeout, refused or dropped connection, truncated body), CFG429 (429 after retries),
///   CFG500 (malformed JSON or wrong content type), CFG5xx (HTTP 5xx), CFG400 (other HTTP 4xx).
/// - login (setSelectedProvider, handleExternalURL, second-screen polling): setAuthenticationStatus(0, …) with
///   "Provider not Available Error" (no answer; + REG500 on a second-screen host), "Internal Authentication
///   Error" (HTTP error, 429, garbage), "Generic Authentication Error" (+ R401 when no access token; no profile
///   after the redirect), "User Not Authenticated Error" + N130 (the second screen's code expired, by the clock
///   or by the backend's answer). A second-screen poll that cannot reach the backend sends REG503 (once per
///   outage) and polling goes on; it is a reason of the login's outcome if the login then fails.
///   setSelectedProvider with an id that is not one of the requestor's MVPDs: "Provider not Selected Error" +
///   PB404. Every failed outcome carries its warning and error statuses (`AuthenticationStatus.statuses`).
/// - checkAuthorization/getAuthorization: tokenRequestFailed with "User not Authorized Error" + Z100 (MVPD deny,
///   `details` as errorDescription; Z169 degradation, Z130 bad resource), "User Not Authenticated Error" + N130
///   or N111 (profile missing/expired at the backend, TempPass over), "Internal Authorization Error" + Z500
///   (HTTP error), "Generic Authorization Error" + Z500 (no answer, garbage) or + Z100 (429 after retries).
/// - checkPreauthorizedResources: the permits of the calls that were answered (none when all failed) + P100
///   (Protocol/README.md, "Preauthorization": chunks after `too_many_resources`, items saying retry asked again).
/// Successes add an advisory status: N011 (TempPass login), N010 (authenticate-all degradation), Z011 (TempPass
/// authorization), Z010 (authorized under a degradation rule; once per checkPreauthorizedResources whose permits
/// came from one). Picking TempPass after it expired ends with
/// "User Not Authenticated Error" + N111.
/// - logout: setAuthenticationStatus(0, "User Not Authenticated Error") whatever the backend answered.
/// - The store failing (read or write) ends any call with its failure callback ("Generic Authentication Error",
///   "Generic Authorization Error", setRequestorComplete(0), preauthorizedResources([]), metadata null), then
///   status STORE500; nothing stored is changed by the failure (Protocol/README.md "The store").
///
/// With `configuration.partnerSSO` (Adobe's "Apple SSO Cookbook (REST API V2)", steps 2–4) the host's TV-provider account takes
/// part: setRequestor exchanges it silently for a profile (only setRequestorComplete fires) or adds status
/// VSA403 / VSA404 / APPL_ERROR after setRequestorComplete(1) (APPL_ERROR also when the exchange's SAML request
/// fails at the host); checkAuthentication reports those instead of N000 and 0 for a partner profile whose platform
/// account no longer stands or whose MVPD no longer has platform services (SSO disabled); getAuthentication shows the platform's
/// picker (presentTvProviderDialog … dismissTvProviderDialog) and falls back to displayProviderDialog after
/// VSA403, VSA404, VSA503, APPL_ERROR, N003, N004 or N005, or to the provider's login page (no status) for a
/// provider without partner SSO; logout of a partner profile adds status VSA203. See `PartnerSSOProvider`.
public protocol AccessEnabler: Sendable {
    /// Sets `applicationProfile` (→ the `profile` query parameter of setRequestor's configuration requests),
    /// `visitorID` (→ `AP-Visitor-Identifier`), `device_info` (base64 JSON, → `X-Device-Info` instead of the
    /// computed one) and `handleSVC` (true: the login and logout pages of an MVPD with `requiresSVC` are sent with
    /// `useSVC: true`, other MVPDs' with false); the keys are `Options.stringKeys` and `Options.boolKeys`, other
    /// keys are ignored. Applies to the next request. Never queued.
    func setOptions(_ options: JSONObject)

    /// Fetches the requestor's configuration from every service provider (default: the backend URL) concurrently
    /// (first responder wins per MVPD), brings the stored profiles in line with the backend, then calls
    /// setRequestorComplete(1) when at least one provider answered, else 0 + a status. Returns that status, with
    /// the reasons of a failure. Call it again when the app returns to the foreground to resynchronize. `answered`
    /// is called with the outcome after setRequestorComplete (and its status), before any call waiting for this setRequestor
    /// (`WaitingCall`) goes on: a host answers its caller there, so that the waiting calls' callbacks come after
    /// that answer.
    func setRequestor(
        _ requestorID: String, serviceProviders: [BackendURL]?, answered: @Sendable (RequestorStatus) -> Void
    ) async -> RequestorStatus

    /// Reports the local authentication state (no network): setAuthenticationStatus + tracking (+ N000/N111).
    func checkAuthentication() async -> AuthenticationStatus

    /// Runs the login flow: returns at once when authenticated (unless `forceAuthn`), else shows the picker
    /// (displayProviderDialog) and returns when the flow ends (handleExternalURL, second-screen poll, cancel).
    /// A requestor without MVPDs ends it at once with "Provider not Available Error" and no picker.
    /// `data` is sent as the promotional TempPass identity (`AP-TempPass-Identity`); `filter` narrows the
    /// platform's picker (partner SSO) only, never the provider dialog.
    func getAuthentication(forceAuthn: Bool, data: JSONObject?, filter: ProviderFilter?) async -> AuthenticationStatus

    /// The user's pick: nil cancels (Provider not Selected Error, N005); a TempPass MVPD authenticates at once;
    /// otherwise navigateToUrl (web view) or REGCODE status + polling (second screen). It completes the login in
    /// progress at once; with none, while a setRequestor is in flight, it waits among the `WaitingCall`s.
    func setSelectedProvider(_ mvpdId: String?) async -> SelectionOutcome

    /// Whether `url` is the registered redirect URL (or the SVC one): scheme, host and path as
    /// `RedirectURL.matches` compares them. Needs no requestor, so that a wrong URL is refused before one is.
    func isRedirectURL(_ url: String) -> Bool

    /// The redirect URLs `isRedirectURL` takes: init's `redirectUrl`, then the SVC one when it is another; for the
    /// error that refuses another URL.
    var redirectURLs: [String] { get }

    /// Completes the login (or logout) flow the redirect URL ends. A second call for the same flow returns the
    /// same status with no new callback and no network call.
    /// - Throws: `AccessEnablerError.invalidRedirectURL` when `url` is not the registered redirect URL.
    func handleExternalURL(_ url: String) async throws(AccessEnablerError) -> AuthenticationStatus

    /// Deprecated alias of completing the login flow (as handleExternalURL with the redirect URL).
    func getAuthenticationToken() async -> AuthenticationStatus

    /// Reports (preauthorizedResources) which of `resources` the user may watch, and why the list may be short;
    /// `cache: false` asks the backend.
    func checkPreauthorizedResources(_ resources: [String], cache: Bool) async -> PreauthorizedResources

    /// The iOS SDK's `preauthorize`: a decision for each of `resources`, each with its own error, and no callback;
    /// `localCache: false` (the SDK's `disableFeatures: [LOCAL_CACHE]`) asks the backend even for resources the
    /// instance knows to be permitted (Protocol/README.md, "Preauthorization").
    func preauthorize(_ resources: [String], localCache: Bool) async -> PreauthorizeResponse

    /// Authorizes `resource` (plain id or MRSS, byte-exact): setToken or tokenRequestFailed, + tracking.
    func checkAuthorization(_ resource: String, data: JSONObject?) async -> AuthorizationOutcome

    /// As checkAuthorization, but runs the login first when the user is not authenticated, then continues.
    func getAuthorization(_ resource: String, data: JSONObject?) async -> AuthorizationOutcome

    /// Deletes the profiles at Adobe and locally (locally also this application's profiles under its other
    /// requestors on this device, as the SDK clears the whole token storage); with a web view navigates to the
    /// MVPD logout page, then ends
    /// with setAuthenticationStatus(0, "User Not Authenticated Error") after handleExternalURL or logoutTimeout.
    func logout() async -> AuthenticationStatus

    /// The selected MVPD (also sent to the delegate's selectedProvider). Never queued.
    func getSelectedProvider() -> MVPD?

    /// Answers with one setMetadataStatus (Protocol/README.md); `arguments` is echoed as sent.
    func getMetadata(_ request: MetadataRequest, arguments: JSON) async -> MetadataStatus

    /// The host went away: flows waiting on it end with their cancel outcome
    /// (Provider not Selected Error, N005) and second-screen polling stops. Sticky: calls waiting for
    /// setRequestor end at once with their failure outcome, and no later call waits on the host (a login ends
    /// with Provider not Selected Error + N005 before any displayProviderDialog; logout does not wait for the
    /// logout page).
    func cancel() async

    /// What the instance's lifecycle says of a call a host just received, asked synchronously on the engine's
    /// executor (the daemon's event loop) in the order the host's peer sent its calls, before the call starts:
    /// `setRequestor` starts the configuration at once, so that the calls sent after it wait for it; a call that
    /// needs a requestor is refused while no setRequestor was ever started (`requestorNotSet`); after `close` or
    /// `cancel` nothing is admitted (`closed`). Protocol/README.md, "Lifecycle".
    func admit(_ call: CallAdmission) -> Admission

    /// `cancel`, said synchronously on the engine's executor (the host's connection closed on its event loop), so
    /// that a call it reads afterwards is not admitted.
    func close()
}

/// What `AccessEnabler.admit` is asked about.
public enum CallAdmission: Sendable {
    /// setRequestor: it starts the configuration.
    case setRequestor
    /// A call refused until a setRequestor was started (Protocol/README.md, Lifecycle 3).
    case needsRequestor
    /// Any other call of the engine.
    case other
}

/// The lifecycle's answer to `AccessEnabler.admit`.
public enum Admission: Sendable, Equatable {
    case admitted
    /// No setRequestor was ever started on this instance (JSON-RPC -32002).
    case requestorNotSet
    /// The instance was closed: nothing starts (JSON-RPC -32003).
    case closed
}

extension AccessEnabler {
    /// setRequestor for a caller that needs no `answered` hook.
    public func setRequestor(_ requestorID: String, serviceProviders: [BackendURL]?) async -> RequestorStatus {
        await setRequestor(requestorID, serviceProviders: serviceProviders, answered: { _ in })
    }
}

/// The SDK calls the engine has no method of that name and shape for; the others (setRequestor,
/// checkAuthentication, getAuthentication, setSelectedProvider, checkPreauthorizedResources, logout, getMetadata,
/// cancel) are the engine's own. The nonisolated ones check or read before entering the actor, as the SDK's
/// object did.
extension Engine: AccessEnabler {
    public nonisolated func setOptions(_ options: JSONObject) {
        shared.withLock { $0.options.apply(options) }
    }

    public nonisolated func isRedirectURL(_ url: String) -> Bool {
        redirectURLs.contains { RedirectURL.matches(url, registered: $0) }
    }

    public nonisolated var redirectURLs: [String] {
        [configuration.redirectURL] + [configuration.svcRedirectURL].compactMap { $0 }.filter { $0 != configuration.redirectURL }
    }

    public nonisolated func handleExternalURL(_ url: String) async throws(AccessEnablerError) -> AuthenticationStatus {
        guard isRedirectURL(url) else { throw .invalidRedirectURL(url) }
        return await handleExternalURL()
    }

    public nonisolated func getAuthenticationToken() async -> AuthenticationStatus {
        await handleExternalURL()
    }

    public nonisolated func checkAuthorization(_ resource: String, data: JSONObject?) async -> AuthorizationOutcome {
        await authorize(resource, data: data, loginIfNeeded: false)
    }

    public nonisolated func getAuthorization(_ resource: String, data: JSONObject?) async -> AuthorizationOutcome {
        await authorize(resource, data: data, loginIfNeeded: true)
    }

    public nonisolated func getSelectedProvider() -> MVPD? {
        let mvpd = shared.withLock { $0.selectedMVPD }
        delegate.selectedProvider(mvpd)
        return mvpd
    }

    /// Engines (AccessEnabler instances) alive in this process (freed ones are not counted).
    public static var liveInstances: Int { live.load(ordering: .relaxed) }
}

/// The redirect URL rule: scheme, host and path compared; query and fragment ignored (Protocol/README.md).
public enum RedirectURL {
    /// What may be registered as a redirect URL (`init`'s `redirectUrl` and `svcRedirectUrl`, the daemon's
    /// `--redirect-url` and `--svc-redirect-url`): an absolute URL with a scheme and a host (`adobepass://ios.app`,
    /// `https://example.com/done`), no space and no control character (it goes to the backend as a session's and a
    /// logout's `redirectUrl`).
    public static func isValid(_ text: String) -> Bool {
        guard let url = AbsoluteURL(text) else { return false }
        return !url.host.isEmpty
    }

    /// Whether `candidate` (handleExternalURL's URL) returns to `registered`: scheme and host compared without
    /// case, paths after RFC 3986's normalization ("Uniform Resource Identifier (URI): Generic Syntax", 6.2.2:
    /// percent-escapes in upper case, unreserved characters decoded; `/` and no path alike); query and fragment
    /// ignored.
    static func matches(_ candidate: String, registered: String) -> Bool {
        // Query and fragment are cut off before parsing: whatever they hold (a space a page left unescaped) is ignored.
        func beforeQuery(_ text: String) -> String { String(text.prefix { $0 != "?" && $0 != "#" }) }
        guard let a = AbsoluteURL(beforeQuery(candidate)), let b = AbsoluteURL(beforeQuery(registered)) else { return false }
        func path(_ url: AbsoluteURL) -> String { url.path == "/" ? "" : normalized(url.path) }
        return a.scheme == b.scheme && a.host.lowercased() == b.host.lowercased() && path(a) == path(b)
    }

    /// `path` with its percent-escapes in RFC 3986's normal form: an escaped unreserved character decoded, any other
    /// escape's hex digits in upper case.
    private static func normalized(_ path: String) -> String { AbsoluteURL.percentDecoded(path, where: AbsoluteURL.isUnreserved) }
}
