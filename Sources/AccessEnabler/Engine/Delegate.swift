import JSON

/// The advanced status dictionary of the `status` callback (Adobe's "Error Reporting", advanced status codes; Protocol/README.md).
public struct AdvancedStatus: Sendable, Equatable {
    /// e.g. N000, N005, N011, N111, N130, Z100, Z130, P100, R400, R401, CFG100, REG100, REG500, REGCODE.
    public var id: String
    /// "info", "warning" or "error".
    public var level: String
    public var message: String?
    public var details: String?
    public var resource: String?
    /// REGCODE and REG100: the authentication code to type on the second screen.
    public var code: String?
    /// REGCODE only: what the host shows the user: the configured activation page with `?code=` (`activationURL`
    /// plus the code), else `authenticateURL`.
    public var url: String?
    /// REGCODE only: `{backend}/api/v2/authenticate/{serviceProvider}/{code}` (REST API V2's "Perform
    /// authentication in user agent"), percent-encoded: a browser that opens it goes straight to the MVPD login.
    public var authenticateURL: String?
    /// REGCODE only: the activation page the application configured (`--activation-url`), as configured; nil
    /// when none is.
    public var activationURL: String?
    /// REGCODE and REG100: the code's expiry in epoch **milliseconds**.
    public var notAfter: Int64?
    /// REG100 only: whole **seconds** until `notAfter`, by the engine's clock.
    public var secondsLeft: Int64?

    public init(
        id: String, level: String, message: String? = nil, details: String? = nil, resource: String? = nil,
        code: String? = nil, url: String? = nil, authenticateURL: String? = nil, activationURL: String? = nil,
        notAfter: Int64? = nil, secondsLeft: Int64? = nil
    ) {
        self.id = id
        self.level = level
        self.message = message
        self.details = details
        self.resource = resource
        self.code = code
        self.url = url
        self.authenticateURL = authenticateURL
        self.activationURL = activationURL
        self.notAfter = notAfter
        self.secondsLeft = secondsLeft
    }

    /// A warning or an error: the levels a failed outcome carries as its reasons (Protocol/README.md "Failure
    /// reasons"); info statuses (N000, N005, REGCODE, …) are never reasons.
    public var isReason: Bool { level == "warning" || level == "error" }
}

/// The SDK's `EntitlementDelegate` + `EntitlementStatus` callbacks (Adobe's "iOS/tvOS API Reference").
///
/// The engine calls these synchronously, in the SDK's order, and returns an operation's outcome only after
/// every callback of that outcome was delivered. Implementations must not block for long.
public protocol EntitlementDelegate: AnyObject, Sendable {
    func setRequestorComplete(_ status: Int32)
    func setAuthenticationStatus(_ status: Int32, errorCode: String)
    func setToken(_ token: String, forResource resource: String)
    func tokenRequestFailed(_ resource: String, errorCode: String, errorDescription: String)
    func selectedProvider(_ mvpd: MVPD?)
    func displayProviderDialog(_ mvpds: [MVPD])
    /// `data` per Adobe's "iOS/tvOS API Reference": sendTrackingData; `event` 0 authentication, 1 authorization, 2 MVPD selection.
    func sendTrackingData(_ data: [String?], forEventType event: Int32)
    /// `expires`: keys 0 and 1, the expiry of `metadata`'s date string in epoch milliseconds.
    func setMetadataStatus(_ metadata: JSON, encrypted: Bool, forKey key: Int32, andArguments arguments: JSON, expires: Int64?)
    func preauthorizedResources(_ resources: [String])
    func navigate(toUrl url: String, useSVC: Bool)
    func presentTvProviderDialog()
    func dismissTvProviderDialog()
    func status(_ status: AdvancedStatus)
}
