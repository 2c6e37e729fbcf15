import struct FoundationEssentials.Date
import ThreadAffinity

/// How one AccessEnabler instance reaches its backend and its host (Protocol/README.md, `init`).
public struct AccessEnablerConfiguration: Sendable {
    /// Where REST API V2 and DCR live, e.g. `https://sp.auth.adobe.com`; plain http only for loopback.
    public var backendURL: BackendURL
    /// The DCR software statement (a JWT). nil: setRequestor ends at once with status 0 and R400, no network.
    public var softwareStatement: String?
    /// What to do about a missing software statement, sent as the `details` of that R400 (the daemon sets it when
    /// its statement file is empty, as the packaged unit's is before one is installed); nil: no details.
    public var missingStatementHelp: String?
    /// The registered redirect URL handleExternalURL accepts (default `adobepass://ios.app`).
    public var redirectURL: String
    /// The MVPDs whose login and logout pages the host opens in the Safari View Controller (with setOptions'
    /// `handleSVC`), as the SDK's app knows them; nil: the configuration answer's `requiresSVC` says (only
    /// pass-emulator sends it).
    public var svcMVPDs: Set<String>?
    /// The redirect URL of those MVPDs' sessions and logouts (the app's custom scheme the view controller ends at);
    /// handleExternalURL accepts it too. nil: `redirectURL`.
    public var svcRedirectURL: String?
    /// What the first setRequestor does to this instance's stored state (the iOS SDK's `initWithStorageCheck`).
    public var storageCheck = StorageCheck.none
    /// false: a second-screen host (REGCODE + polling, no navigateToUrl), like tvOS.
    public var webView: Bool
    /// The programmer's second-screen page (`--activation-url`), reported in the REGCODE status as
    /// `activationUrl` and, with `?code=` added, as its `url`; nil: REGCODE's `url` is the authenticate URL.
    public var activationURL: String?
    /// Timeout of each HTTP request (``defaultRequestTimeout`` unless set).
    public var requestTimeout: Duration
    /// 15 s: the default of ``requestTimeout``, and of the daemon's `--request-timeout`.
    public static let defaultRequestTimeout = Duration.seconds(15)
    /// How long logout waits for handleExternalURL of the logout page before ending anyway (default 10 s).
    public var logoutTimeout: Duration
    /// The local clock; the engine corrects it with the skew measured from the backend's `Date` header.
    public var clock: @Sendable () -> Date
    /// A fixed device id; nil → a random id persisted in the store. A host acting for a device (fleet mode)
    /// sets that device's identifier: the profiles, the selection and every REST API V2 call are then its own.
    public var deviceID: String?
    /// `X-Device-Info` (base64 JSON) of the device a host acts for; nil → setOptions' `device_info`, else computed.
    public var deviceInfo: String?
    /// The address of the device a host acts for, sent as `X-Forwarded-For` on every REST API V2 call.
    public var forwardedFor: String?
    /// The platform-identity and service-token single sign-on tokens sent on the calls Adobe names (Protocol/README.md,
    /// "Single sign-on by platform identity and by service token"); none by default.
    public var singleSignOn = SingleSignOnTokens()
    /// The host's partner single sign-on (Adobe's "Apple SSO Cookbook (REST API V2)"); nil = no partner SSO, regular flows only.
    public var partnerSSO: (any PartnerSSOProvider)?
    /// How long the engine waits for one answer of `partnerSSO` before counting it as
    /// `serviceTemporarilyUnavailable` (VSA503; Protocol/README.md: 10 s).
    public var partnerSSOTimeout: Duration
    /// Interval between polls of `profiles/code/{code}` (3–5 s in production; shorter in tests).
    public var pollInterval: Duration
    /// The least time between two REG100 countdown statuses of one second-screen login, by the engine's clock
    /// (default 30 s; checked at each poll, so REG100 comes on a poll).
    public var countdownInterval: Duration = .seconds(30)
    /// Attempts of one request when the backend answers 429 (waiting ≥ 1 s between them).
    public var maxThrottleRetries: Int
    /// Receives log lines with their level: one per backend exchange at `.debug` (method, path with codes
    /// redacted, HTTP status or failure), what the storage check found at `.warning`, no HTTP at all at `.error`;
    /// never tokens, secrets, bodies or query strings (the store's failures are the store's log: `TokenStore`).
    /// nil: no logging.
    public var log: EngineLog?
    /// The serial executor the engine (and its REST clients) run on: the daemon gives each instance its
    /// connection's event loop, so that a call enters the engine on the thread that read it, in the order it was
    /// read, and store and HTTP completions resume there (ARCHITECTURE.md, "Threads"). nil: a thread shared by
    /// every engine without one.
    public var executor: (any TimerExecutor)?
    /// Where requests go: the process's shared `HTTPTransport`, or a test's substitute.
    var httpClient: any HTTPClient = HTTPTransport.shared

    public init(
        backendURL: BackendURL, softwareStatement: String?, redirectURL: String = "adobepass://ios.app",
        webView: Bool = true, activationURL: String? = nil, requestTimeout: Duration = defaultRequestTimeout,
        logoutTimeout: Duration = .seconds(10), clock: @escaping @Sendable () -> Date = { Date() },
        deviceID: String? = nil, partnerSSO: (any PartnerSSOProvider)? = nil, partnerSSOTimeout: Duration = .seconds(10),
        pollInterval: Duration = .seconds(4),
        maxThrottleRetries: Int = 3, log: EngineLog? = nil
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
        deviceInfo = nil
        forwardedFor = nil
        self.partnerSSO = partnerSSO
        self.partnerSSOTimeout = partnerSSOTimeout
        self.pollInterval = pollInterval
        self.maxThrottleRetries = maxThrottleRetries
        self.log = log
    }

    /// The activation page with the code filled in (`?code=`, or `&code=` when the page has a query already), as
    /// the emulator's `/activate` takes it; nil when no activation page is configured.
    func activationPage(code: String) -> String? {
        guard var base = activationURL else { return nil }
        var fragment = ""
        if let hash = base.firstIndex(of: "#") {
            fragment = String(base[hash...])
            base = String(base[..<hash])
        }
        let joiner = !base.contains("?") ? "?" : (base.hasSuffix("?") || base.hasSuffix("&") ? "" : "&")
        return base + joiner + "code=" + FormEncoding.escape(code) + fragment
    }
}

extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        var value = self
        while value.hasSuffix(suffix) { value.removeLast(suffix.count) }
        return value
    }
}

/// The tokens of the two single sign-on methods REST API V2 takes as headers (Adobe Pass REST API V2, "Single
/// Sign-On - Platform Identity - Flows" and "Single Sign-On - Service Token - Flows"). The engine sends them on
/// sessions create, profiles (all and per MVPD), decisions and logout, and, when no login is stored, asks
/// `profiles` whether they already give one.
public struct SingleSignOnTokens: Sendable, Equatable {
    /// `Adobe-Subject-Token`: the platform's identity token (a JWS or JWE the platform gives every app on the device).
    public var subjectToken: String?
    /// `AD-Service-Token`: the programmer's identity service's token for the user (a JWS), the same on every device.
    public var serviceToken: String?

    public init(subjectToken: String? = nil, serviceToken: String? = nil) {
        self.subjectToken = subjectToken
        self.serviceToken = serviceToken
    }

    /// Neither token is set.
    public var isEmpty: Bool { subjectToken == nil && serviceToken == nil }

    /// The headers, in this order: `Adobe-Subject-Token`, `AD-Service-Token`.
    var headers: [(String, String)] {
        (subjectToken.map { [("Adobe-Subject-Token", $0)] } ?? []) + (serviceToken.map { [("AD-Service-Token", $0)] } ?? [])
    }
}

/// Where the engine's and the store's log lines go, with how much each matters. The line is an autoclosure, made
/// only if the sink writes it: a backend exchange's debug line cost 12,700 instructions per call at the default level.
public typealias EngineLog = @Sendable (EngineLogLevel, @autoclosure () -> String) -> Void

/// How much an engine log line matters; the daemon maps it to its own log levels.
public enum EngineLogLevel: Sendable {
    /// A backend exchange or a detail of one (never a token, secret, body or query string).
    case debug
    /// Something that went wrong is right again (the store works again after failures).
    case info
    /// Something went wrong that the caller is not told of in an answer (a store failure, what the storage check
    /// found).
    case warning
    /// The engine cannot do its work (no HTTP at all).
    case error
}

/// The iOS SDK's integrity check of its storage (`initWithStorageCheck`; Protocol/README.md, "Lifecycle"), run by the
/// instance's first setRequestor, before its re-sync.
public enum StorageCheck: String, Sendable, CaseIterable {
    /// Nothing (the default).
    case none
    /// The store answers a read of the requestor's logins and every stored value of them reads; else as `clear`.
    case all
    /// The requestor's logins on this device are ended at the backend (one logout per MVPD) and removed here.
    case clear
}
