import Foundation

/// How one AccessEnabler instance reaches its backend and its host (DESIGN §3 `init`, §4).
public struct AccessEnablerConfiguration: Sendable {
    /// Where REST API V2 and DCR live, e.g. `https://sp.auth.adobe.com`; plain http only for loopback.
    public var backendURL: URL
    /// The DCR software statement (a JWT). nil: setRequestor ends at once with status 0 and R400, no network.
    public var softwareStatement: String?
    /// The registered redirect URL handleExternalURL accepts (default `adobepass://ios.app`).
    public var redirectURL: String
    /// false: a second-screen host (REGCODE + polling, no navigateToUrl), like tvOS.
    public var webView: Bool
    /// The activation page reported in the REGCODE status; nil → backend URL + `/activate`.
    public var activationURL: String?
    /// Timeout of each HTTP request.
    public var requestTimeout: Duration
    /// How long logout waits for handleExternalURL of the logout page before ending anyway (default 10 s).
    public var logoutTimeout: Duration
    /// The local clock; the engine corrects it with the skew measured from the backend's `Date` header.
    public var clock: @Sendable () -> Date
    /// A fixed device id; nil → a random id persisted in the store.
    public var deviceID: String?
    /// Partner SSO hook (issue 6); nil = no partner SSO.
    public var partnerSSO: (any PartnerSSOProvider)?
    /// Interval between polls of `profiles/code/{code}` (3–5 s in production; shorter in tests).
    public var pollInterval: Duration
    /// Attempts of one request when the backend answers 429 (waiting ≥ 1 s between them).
    public var maxThrottleRetries: Int
    /// Receives one line per backend exchange (method, path with codes redacted, HTTP status or failure);
    /// never tokens, secrets, bodies or query strings. nil: no logging.
    public var log: (@Sendable (String) -> Void)?

    public init(
        backendURL: URL, softwareStatement: String?, redirectURL: String = "adobepass://ios.app",
        webView: Bool = true, activationURL: String? = nil, requestTimeout: Duration = .seconds(15),
        logoutTimeout: Duration = .seconds(10), clock: @escaping @Sendable () -> Date = { Date() },
        deviceID: String? = nil, partnerSSO: (any PartnerSSOProvider)? = nil, pollInterval: Duration = .seconds(4),
        maxThrottleRetries: Int = 3, log: (@Sendable (String) -> Void)? = nil
    ) {
        self.backendURL = backendURL
        self.softwareStatement = softwareStatement
        self.redirectURL = redirectURL
        self.webView = webView
        self.activationURL = activationURL
        self.requestTimeout = requestTimeout
        self.logoutTimeout = logoutTimeout
        self.clock = clock
        self.deviceID = deviceID
        self.partnerSSO = partnerSSO
        self.pollInterval = pollInterval
        self.maxThrottleRetries = maxThrottleRetries
        self.log = log
    }

    /// The activation URL REGCODE reports.
    var effectiveActivationURL: String {
        activationURL ?? backendURL.absoluteString.trimmingSuffix("/") + "/activate"
    }
}

/// The seam for partner SSO (issue 6): the host that answers the platform's account requests.
/// Not used yet; the engine runs the regular flows when the configuration's `partnerSSO` is nil.
public protocol PartnerSSOProvider: Sendable {}

extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        var value = self
        while value.hasSuffix(suffix) { value.removeLast(suffix.count) }
        return value
    }
}
