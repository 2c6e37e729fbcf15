import JSON

/// Status values of `setRequestorComplete` and `setAuthenticationStatus` (Adobe's "iOS/tvOS API Reference": error codes).
public enum AccessEnablerStatus {
    /// `ACCESS_ENABLER_STATUS_SUCCESS`.
    public static let success: Int32 = 1
    /// `ACCESS_ENABLER_STATUS_ERROR`.
    public static let error: Int32 = 0
}

/// The SDK's error-code strings (Adobe's "iOS/tvOS API Reference": error codes); "" means authenticated.
public enum SDKErrorCode {
    public static let userAuthenticated = ""
    public static let userNotAuthenticated = "User Not Authenticated Error"
    public static let userNotAuthorized = "User not Authorized Error"
    public static let providerNotSelected = "Provider not Selected Error"
    public static let providerNotAvailable = "Provider not Available Error"
    public static let genericAuthentication = "Generic Authentication Error"
    public static let genericAuthorization = "Generic Authorization Error"
    public static let internalAuthentication = "Internal Authentication Error"
    public static let internalAuthorization = "Internal Authorization Error"
    public static let internalError = "Internal Error"
}

/// Tracking event numbers of `sendTrackingData` (Adobe's "iOS/tvOS API Reference": sendTrackingData).
public enum TrackingEvent {
    public static let authentication: Int32 = 0
    public static let authorization: Int32 = 1
    public static let selectedProvider: Int32 = 2
}

/// An MVPD of the requestor's configuration, with the SDK's property names (Protocol/README.md).
/// Absent flags are false, absent strings nil.
public struct MVPD: Sendable, Equatable {
    public var ID: String
    public var displayName: String
    public var logoURL: String?
    public var enablePlatformServices: Bool
    public var boardingStatus: String?
    public var displayInPlatformPicker: Bool
    public var platformMappingId: String?
    public var isTempPass: Bool
    /// The MVPD's login and logout pages must open in a Safari View Controller (Adobe's "SFSafariViewController
    /// support on iOS SDK 3.2+": decided by the server's configuration). REST API V2's MVPD object has no such
    /// field, so this is PassBridge's own `requiresSVC` member of the configuration answer (`pass-emulator` sends
    /// it; Adobe's backend does not, and its MVPDs read false).
    public var requiresSVC: Bool

    public init(
        ID: String, displayName: String, logoURL: String? = nil, enablePlatformServices: Bool = false,
        boardingStatus: String? = nil, displayInPlatformPicker: Bool = false, platformMappingId: String? = nil,
        isTempPass: Bool = false, requiresSVC: Bool = false
    ) {
        self.ID = ID
        self.displayName = displayName
        self.logoURL = logoURL
        self.enablePlatformServices = enablePlatformServices
        self.boardingStatus = boardingStatus
        self.displayInPlatformPicker = displayInPlatformPicker
        self.platformMappingId = platformMappingId
        self.isTempPass = isTempPass
        self.requiresSVC = requiresSVC
    }
}

/// The outcome of a login-family call: the values of its `setAuthenticationStatus` callback (status 1 with
/// errorCode "", or 0 with an SDK error string) and the reasons of a failure.
public struct AuthenticationStatus: Sendable, Equatable {
    public var status: Int32
    public var errorCode: String
    /// The warning and error statuses that explain a failed outcome, in the order they were sent, wherever in
    /// the flow they were raised (its setSelectedProvider, a second-screen poll, the partner step); else those of
    /// the instance's failed setRequestor. Empty on success and when there is no reason to give (Protocol/README.md
    /// "Failure reasons").
    public var statuses: [AdvancedStatus]

    public init(status: Int32, errorCode: String, statuses: [AdvancedStatus] = []) {
        self.status = status
        self.errorCode = errorCode
        self.statuses = statuses
    }
    static let authenticated = AuthenticationStatus(status: 1, errorCode: "")
    static func failed(_ code: String) -> AuthenticationStatus { AuthenticationStatus(status: 0, errorCode: code) }
}

/// The outcome of setRequestor: the status of its `setRequestorComplete` callback (1 configured, 0 failed) and,
/// when it failed, the warning and error statuses that say why (R400, CFG404, …).
public struct RequestorStatus: Sendable, Equatable {
    public var status: Int32
    public var statuses: [AdvancedStatus]

    public init(status: Int32, statuses: [AdvancedStatus] = []) {
        self.status = status
        self.statuses = statuses
    }
}

/// The terminal outcome of checkAuthorization/getAuthorization: a `setToken` or a `tokenRequestFailed`.
public enum AuthorizationOutcome: Sendable, Equatable {
    /// `token` is the decision's `serializedToken` (base64 media token); `resource` byte-exact as requested;
    /// `statuses` the advisory status sent after setToken (Z011 TempPass, Z010 degradation), if any.
    case token(token: String, resource: String, statuses: [AdvancedStatus] = [])
    /// `errorDescription` is the decision error's `details`, else ""; `statuses` are the warning and error
    /// statuses that explain the failure (as in `AuthenticationStatus.statuses`).
    case failed(resource: String, errorCode: String, errorDescription: String, statuses: [AdvancedStatus] = [])
}

/// What setSelectedProvider did.
public enum SelectionOutcome: Sendable, Equatable {
    /// The login started: navigateToUrl or the REGCODE status was sent; the login flow ends later.
    case started
    /// The call ended the flow itself (TempPass, nil, unknown id, or a failure) with this status.
    case ended(AuthenticationStatus)
}

/// What checkPreauthorizedResources answered (Protocol/README.md, "Preauthorization" and "Failure reasons").
public struct PreauthorizedResources: Sendable, Equatable {
    /// The ids found permitted, in the host's order and spelling, each once: preauthorizedResources' list.
    public var resources: [String]
    /// Why the list may be short: the warning and error statuses the call sent after preauthorizedResources
    /// (P100, Z010, STORE500, a gone login's N-code), or, with no requestor configured, the failed setRequestor's
    /// reasons. The result's only, not the callback's.
    public var statuses: [AdvancedStatus]

    public init(resources: [String], statuses: [AdvancedStatus] = []) {
        self.resources = resources
        self.statuses = statuses
    }
}

/// The values of one `setMetadataStatus` callback (Protocol/README.md).
public struct MetadataStatus: Sendable, Equatable {
    /// The expiry as the SDK's date string (`SDKDate`) for keys 0 and 1, the device id string for 2, the
    /// attribute's value for 3 (or the whole `{updated, encrypted, data}` object); `.null` when there is none.
    public var metadata: JSON
    public var encrypted: Bool
    /// 0 authentication expiry, 1 authorization expiry, 2 device id, 3 user metadata.
    public var key: Int32
    /// The request's arguments as the host sent them.
    public var arguments: JSON
    /// Keys 0 and 1: the expiry in epoch **milliseconds** (nil: none).
    public var expires: Int64?
    /// Why `metadata` is null when something failed: the failed setRequestor's reasons (no requestor configured),
    /// the store's failure (STORE500); empty otherwise. The result's only, not setMetadataStatus's.
    public var statuses: [AdvancedStatus]

    public init(metadata: JSON, encrypted: Bool, key: Int32, arguments: JSON, expires: Int64? = nil, statuses: [AdvancedStatus] = []) {
        self.metadata = metadata
        self.encrypted = encrypted
        self.key = key
        self.arguments = arguments
        self.expires = expires
        self.statuses = statuses
    }
}

/// A getMetadata request (the SDK's `METADATA_*` op codes).
public enum MetadataRequest: Sendable, Equatable {
    /// An expiry (keys 0 and 1).
    var isExpiry: Bool {
        switch self {
        case .authenticationExpiry, .authorizationExpiry: true
        case .deviceID, .userMetadata, .userMetadataObject: false
        }
    }

    case authenticationExpiry
    case authorizationExpiry(resource: String)
    case deviceID
    case userMetadata(key: String)
    /// All the profile's user metadata as one object, the SDK's shape: `{updated, encrypted, data}` —
    /// `updated` the profile's `notBefore` (when the backend issued it) in epoch **seconds**, `encrypted` the
    /// names of the attributes whose value is encrypted, `data` every attribute's value by name.
    case userMetadataObject

    /// The op-code number reported as `key`.
    public var key: Int32 {
        switch self {
        case .authenticationExpiry: return 0
        case .authorizationExpiry: return 1
        case .deviceID: return 2
        case .userMetadata, .userMetadataObject: return 3
        }
    }
}

/// Errors thrown by the engine to the caller (not SDK callbacks).
public enum AccessEnablerError: Error, Equatable {
    /// handleExternalURL with a URL that is not the registered redirect URL (scheme, host and path compared).
    case invalidRedirectURL(String)
}

/// The answer of `preauthorize` (the iOS SDK 3.6's `PreauthorizeResponse`; Protocol/README.md, "Preauthorization"):
/// a decision for each resource asked, in the host's order, each with the error that refused it; `status` when the
/// whole request failed before any decision (then every decision is a refusal carrying it).
public struct PreauthorizeResponse: Sendable, Equatable {
    /// One resource's decision.
    public struct Decision: Sendable, Equatable {
        public var id: String
        public var authorized: Bool
        public var error: PreauthorizeError?

        public init(id: String, authorized: Bool, error: PreauthorizeError?) {
            self.id = id
            self.authorized = authorized
            self.error = error
        }
    }

    public var status: PreauthorizeError?
    public var decisions: [Decision]

    public init(status: PreauthorizeError?, decisions: [Decision]) {
        self.status = status
        self.decisions = decisions
    }
}

/// An error of `preauthorize`, REST API V2's error object as the backend sent it (`status` its HTTP status), or one
/// the daemon made for what never reached the backend (`status` 0: `authentication_session_missing`,
/// `requestor_not_configured`, `network_error`, `server_response_format_unknown`, `access_token_unavailable`, the
/// SDK's own codes).
public struct PreauthorizeError: Sendable, Equatable {
    public var status: Int
    public var code: String
    public var message: String?
    public var details: String?
    public var action: String

    public init(status: Int, code: String, message: String? = nil, details: String? = nil, action: String) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.action = action
    }
}
