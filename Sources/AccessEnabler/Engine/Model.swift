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

    public init(
        ID: String, displayName: String, logoURL: String? = nil, enablePlatformServices: Bool = false,
        boardingStatus: String? = nil, displayInPlatformPicker: Bool = false, platformMappingId: String? = nil,
        isTempPass: Bool = false
    ) {
        self.ID = ID
        self.displayName = displayName
        self.logoURL = logoURL
        self.enablePlatformServices = enablePlatformServices
        self.boardingStatus = boardingStatus
        self.displayInPlatformPicker = displayInPlatformPicker
        self.platformMappingId = platformMappingId
        self.isTempPass = isTempPass
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
    /// `token` is the decision's `serializedToken` (base64 media token); `resource` byte-exact as requested.
    case token(token: String, resource: String)
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

/// The values of one `setMetadataStatus` callback (Protocol/README.md).
public struct MetadataStatus: Sendable, Equatable {
    /// Expiry in epoch **milliseconds** (number) for keys 0 and 1, the device id string for 2,
    /// the attribute's value for 3; `.null` when there is none.
    public var metadata: JSON
    public var encrypted: Bool
    /// 0 authentication expiry, 1 authorization expiry, 2 device id, 3 user metadata.
    public var key: Int32
    /// The request's arguments as the host sent them.
    public var arguments: JSON
    public init(metadata: JSON, encrypted: Bool, key: Int32, arguments: JSON) {
        self.metadata = metadata
        self.encrypted = encrypted
        self.key = key
        self.arguments = arguments
    }
}

/// A getMetadata request (the SDK's `METADATA_*` op codes).
public enum MetadataRequest: Sendable, Equatable {
    case authenticationExpiry
    case authorizationExpiry(resource: String)
    case deviceID
    case userMetadata(key: String)

    /// The op-code number reported as `key`.
    public var key: Int32 {
        switch self {
        case .authenticationExpiry: return 0
        case .authorizationExpiry: return 1
        case .deviceID: return 2
        case .userMetadata: return 3
        }
    }
}

/// Errors thrown by the engine to the caller (not SDK callbacks).
public enum AccessEnablerError: Error, Equatable {
    /// handleExternalURL with a URL that is not the registered redirect URL (scheme, host and path compared).
    case invalidRedirectURL(String)
}
