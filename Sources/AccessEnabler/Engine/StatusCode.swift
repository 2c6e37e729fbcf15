/// Every advanced status the engine sends through `EntitlementDelegate.status`, with its level and usual message:
/// Adobe's advanced error codes (Adobe's "iOS/tvOS API Reference" and "Error Reporting": N…, Z…, P100, R400/R401,
/// CFG…, REG…, VSA…, APPL_ERROR) and the daemon's own (STORE500, PB404, REG100, REG503). What each means to a host
/// is in Protocol/README.md, "Values". Build a status with `AdvancedStatus(_:message:…)`; a site passes a message
/// only when it says more than the usual one.
public enum StatusCode: Sendable, Hashable {
    case appl, vsa203, vsa403, vsa404, vsa503
    case n000, n003, n004, n005, n010, n011, n111, n130
    case z010, z011, z100, z110, z120, z130, z169, z500
    case p100, r400, r401
    /// The device clock is off the backend's.
    case cfg100
    case cfg400, cfg404, cfg429
    /// The backend answered the configuration request with this 5xx status (`CFG500`, `CFG503`, …).
    case cfg5xx(Int)
    case reg100, reg500, reg503, regcode
    case store500, pb404
    /// The backend's TLS certificate did not verify (a proxy, an interception).
    case sec420
    /// Adobe says the device identifier is not the one the login was made with (`device_identifier_mismatch`):
    /// the stored login is dropped.
    case sec412
    /// An internal error of the login (the SDK's Generic or Internal Authentication Error).
    case n500

    /// The status id as it goes on the wire: the case's name in capitals (`n000` → `N000`, `store500` →
    /// `STORE500`), but `APPL_ERROR` and `CFG5xx` with the backend's status.
    public var id: String {
        switch self {
        case .appl: "APPL_ERROR"
        case .cfg5xx(let status): "CFG\(status)"
        default: String(describing: self).uppercased()
        }
    }

    /// "info", "warning" or "error"; warnings and errors are a failed outcome's reasons.
    public var level: String {
        switch self {
        case .vsa203, .vsa403, .vsa404, .vsa503, .n000, .n003, .n004, .n005, .n011, .z011, .reg100, .regcode: "info"
        case .n010, .n111, .z010, .cfg100, .reg503, .sec412: "warning"
        case .appl, .n130, .z100, .z110, .z120, .z130, .z169, .z500, .p100, .r400, .r401, .cfg400, .cfg404, .cfg429, .cfg5xx,
            .reg500, .store500, .pb404, .sec420, .n500:
            "error"
        }
    }

    /// The usual message (nil where only the backend's own text says anything).
    var message: String? {
        switch self {
        case .appl: "The platform's account request failed"
        case .vsa203: "Sign out of the TV provider in the platform's settings too"
        case .vsa403: "The TV provider permission was denied for this application"
        case .vsa404: "The TV provider permission is not determined yet"
        case .n000: "The user is not authenticated"
        case .n003: "Other TV provider was chosen in the platform picker"
        case .n004: "The chosen TV provider is not supported by this application"
        case .n005: "The provider selection was cancelled"
        case .n010: "Authenticated under an authenticate-all degradation rule"
        case .n011: "Authenticated with TempPass"
        case .n111: "TempPass expired"
        case .n130: "The authentication code expired"
        case .z010: "Authorized under a degradation rule"
        case .z011: "Authorized with TempPass"
        case .z120: "The MVPD could not be reached; the request may succeed later"
        case .z500: "Internal authorization error"
        case .p100: "Preauthorization failed"
        case .r401: "No access token"
        case .cfg100: "The device clock differs from the backend's by more than 5 minutes"
        case .cfg404: "Backend not reachable"
        case .cfg429: "Too many requests"
        case .reg500: "No authentication code"
        case .reg503: "The backend could not be reached to check the code; still trying"
        case .sec420: "The backend's TLS certificate did not verify"
        case .sec412: "The device identifier does not match the login's; the login was removed"
        case .n500: "Internal authentication error"
        case .vsa503, .z100, .z110, .z130, .z169, .r400, .cfg400, .cfg5xx, .reg100, .regcode, .store500, .pb404: nil
        }
    }
}

extension AdvancedStatus {
    /// A status of the catalogue: its id and level, and `message` or else the code's usual one.
    public init(
        _ code: StatusCode, message: String? = nil, details: String? = nil, resource: String? = nil, code authenticationCode: String? = nil,
        url: String? = nil, authenticateURL: String? = nil, activationURL: String? = nil, notAfter: Int64? = nil, secondsLeft: Int64? = nil
    ) {
        self.init(
            id: code.id, level: code.level, message: message ?? code.message, details: details, resource: resource,
            code: authenticationCode, url: url, authenticateURL: authenticateURL, activationURL: activationURL, notAfter: notAfter,
            secondsLeft: secondsLeft)
    }
}
