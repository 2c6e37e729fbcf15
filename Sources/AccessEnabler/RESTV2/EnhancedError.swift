import JSON

/// What a client should do about an error: the `action` of an enhanced error (Adobe's "Enhanced Error Codes",
/// Action), which decides what the engine tells the host (Protocol/README.md, "Authorization failures").
enum ErrorAction: String, Sendable {
    /// Nothing predefined: a denial, or a request to fix.
    case none
    /// A configuration change in Adobe's dashboard.
    case configuration
    /// The client application registers again.
    case applicationRegistration = "application-registration"
    /// The user logs in again: the login is gone.
    case authentication
    /// A new authorization for the resource.
    case authorization
    /// The same request again; it may succeed.
    case retry
}

/// The codes of REST API V2's error enumeration (`ErrorInformation`'s `code`, Adobe's OpenAPI document for REST API
/// V2), each with its documented action: Adobe's "Enhanced Error Codes" lists REST API V2's codes and REST API v1's
/// (the same code, the same action); `invalid_header_pfs_provider_info_expired`,
/// `authorization_denied_by_degradation_configuration_change`, `maximum_attempts_exceeded`, `degraded_integration` and
/// `invalid_refresh_token`, in the enumeration but in neither list, take the action of their kind.
enum EnhancedErrorCode: String, Sendable, CaseIterable {
    case invalidParameterServiceProvider = "invalid_parameter_service_provider"
    case invalidParameterMVPD = "invalid_parameter_mvpd"
    case invalidParameterCode = "invalid_parameter_code"
    case invalidParameterRedirectURL = "invalid_parameter_redirect_url"
    case invalidParameterResources = "invalid_parameter_resources"
    case invalidParameterPartner = "invalid_parameter_partner"
    case invalidParameterSAMLResponse = "invalid_parameter_saml_response"
    case invalidHeaderDeviceInfo = "invalid_header_device_info"
    case invalidHeaderDeviceIdentifier = "invalid_header_device_identifier"
    case invalidHeaderIdentityForTemporaryAccess = "invalid_header_identity_for_temporary_access"
    case invalidHeaderPFSPermissionAccessNotPresent = "invalid_header_pfs_permission_access_not_present"
    case invalidHeaderPFSPermissionAccessNotDetermined = "invalid_header_pfs_permission_access_not_determined"
    case invalidHeaderPFSPermissionAccessNotGranted = "invalid_header_pfs_permission_access_not_granted"
    case invalidHeaderPFSProviderIDNotDetermined = "invalid_header_pfs_provider_id_not_determined"
    case invalidHeaderPFSProviderIDMismatch = "invalid_header_pfs_provider_id_mismatch"
    case invalidHeaderPFSProviderInfoExpired = "invalid_header_pfs_provider_info_expired"
    case invalidIntegration = "invalid_integration"
    case invalidAuthenticationSession = "invalid_authentication_session"
    case authorizationDeniedByDegradationRule = "authorization_denied_by_degradation_rule"
    case authorizationDeniedByDegradationConfigurationChange = "authorization_denied_by_degradation_configuration_change"
    case internalServerError = "internal_server_error"
    case invalidRefreshToken = "invalid_refresh_token"
    case preauthorizationDeniedByMVPD = "preauthorization_denied_by_mvpd"
    case authorizationDeniedByMVPD = "authorization_denied_by_mvpd"
    case authorizationDeniedByParentalControls = "authorization_denied_by_parental_controls"
    case invalidRequestor = "invalid_requestor"
    case invalidDeviceInfo = "invalid_device_info"
    case invalidDeviceID = "invalid_device_id"
    case missingResource = "missing_resource"
    case malformedAuthzRequest = "malformed_authz_request"
    case internalError = "internal_error"
    case invalidConfigurationUserMetadataCertificate = "invalid_configuration_user_metadata_certificate"
    case invalidConfigurationTemporaryAccess = "invalid_configuration_temporary_access"
    case invalidConfigurationPlatform = "invalid_configuration_platform"
    case invalidConfigurationPlatformID = "invalid_configuration_platform_id"
    case invalidConfigurationPlatformTrait = "invalid_configuration_platform_trait"
    case invalidConfigurationPlatformCategoryTrait = "invalid_configuration_platform_category_trait"
    case invalidConfigurationPlatformServices = "invalid_configuration_platform_services"
    case invalidConfigurationMVPDPlatform = "invalid_configuration_mvpd_platform"
    case invalidConfigurationMVPDPlatformBoardingStatus = "invalid_configuration_mvpd_platform_boarding_status"
    case invalidConfigurationMVPDPlatformProfileExchange = "invalid_configuration_mvpd_platform_profile_exchange"
    case tooManyResources = "too_many_resources"
    case unknownIntegration = "unknown_integration"
    case invalidAccessTokenServiceProvider = "invalid_access_token_service_provider"
    case invalidAccessTokenClientApplication = "invalid_access_token_client_application"
    case authenticatedProfileMissing = "authenticated_profile_missing"
    case authenticatedProfileExpired = "authenticated_profile_expired"
    case authenticatedProfileInvalidated = "authenticated_profile_invalidated"
    case temporaryAccessDurationLimitExceeded = "temporary_access_duration_limit_exceeded"
    case temporaryAccessResourcesLimitExceeded = "temporary_access_resources_limit_exceeded"
    case authorizationDeniedByHBAPolicies = "authorization_denied_by_hba_policies"
    case authorizationDeniedBySessionInvalidated = "authorization_denied_by_session_invalidated"
    case identityNotRecognizedByMVPD = "identity_not_recognized_by_mvpd"
    case authenticationSessionIssuerMismatch = "authentication_session_issuer_mismatch"
    case authenticationSessionInvalidated = "authentication_session_invalidated"
    case authenticationSessionMissing = "authentication_session_missing"
    case authenticationSessionExpired = "authentication_session_expired"
    case preauthorizationAuthenticationSessionMissing = "preauthorization_authentication_session_missing"
    case preauthorizationAuthenticationSessionExpired = "preauthorization_authentication_session_expired"
    case authorizationNotFound = "authorization_not_found"
    case authorizationExpired = "authorization_expired"
    case networkReceivedError = "network_received_error"
    case networkConnectionTimeout = "network_connection_timeout"
    case maximumExecutionTimeExceeded = "maximum_execution_time_exceeded"
    case maximumAttemptsExceeded = "maximum_attempts_exceeded"
    case degradedIntegration = "degraded_integration"
    /// Outside REST API V2's enumeration, in Adobe's list (action `authorization`): the device identifier of the
    /// request is not the one the login was made with (status SEC412: the login is dropped).
    case deviceIdentifierMismatch = "device_identifier_mismatch"

    /// The action Adobe documents for the code.
    var action: ErrorAction {
        switch self {
        case .tooManyResources, .unknownIntegration, .invalidConfigurationUserMetadataCertificate, .invalidConfigurationTemporaryAccess,
            .invalidConfigurationPlatform, .invalidConfigurationPlatformID, .invalidConfigurationPlatformTrait,
            .invalidConfigurationPlatformCategoryTrait, .invalidConfigurationPlatformServices, .invalidConfigurationMVPDPlatform,
            .invalidConfigurationMVPDPlatformBoardingStatus, .invalidConfigurationMVPDPlatformProfileExchange:
            .configuration
        case .invalidAccessTokenServiceProvider, .invalidAccessTokenClientApplication, .invalidRefreshToken:
            .applicationRegistration
        case .authenticatedProfileMissing, .authenticatedProfileExpired, .authenticatedProfileInvalidated,
            .temporaryAccessDurationLimitExceeded, .temporaryAccessResourcesLimitExceeded, .authorizationDeniedByHBAPolicies,
            .authorizationDeniedBySessionInvalidated, .identityNotRecognizedByMVPD, .authenticationSessionIssuerMismatch,
            .authenticationSessionInvalidated, .authenticationSessionMissing, .authenticationSessionExpired,
            .preauthorizationAuthenticationSessionMissing, .preauthorizationAuthenticationSessionExpired:
            .authentication
        case .authorizationNotFound, .authorizationExpired, .deviceIdentifierMismatch:
            .authorization
        case .networkReceivedError, .networkConnectionTimeout, .maximumExecutionTimeExceeded:
            .retry
        default:
            .none
        }
    }

    /// A TempPass has run out (`temporary_access_*`).
    var endsTempPass: Bool { self == .temporaryAccessDurationLimitExceeded || self == .temporaryAccessResourcesLimitExceeded }
}

/// An enhanced error object (`status`, `code`, `message`, `details`, `action`; Adobe's "Enhanced Error Codes"), top
/// level in a non-2xx body or per item in a decisions answer, decoded once: `known` is its code in the
/// enumeration (nil for a code the engine does not know), `action` the one it carries, else the code's documented
/// one, else `none`.
struct EnhancedError: Sendable, Equatable {
    var status: Int?
    /// As sent; "" when absent.
    var code: String
    var message: String?
    /// "" when absent (the MVPD's text, passed to the host intact).
    var details: String
    var action: ErrorAction

    var known: EnhancedErrorCode? { EnhancedErrorCode(rawValue: code) }

    init(status: Int? = nil, code: String = "", message: String? = nil, details: String = "", action: ErrorAction? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.action = action ?? EnhancedErrorCode(rawValue: code)?.action ?? .none
    }

    /// nil when `json` is not an object.
    init?(_ json: JSON?) {
        guard let json, json.objectValue != nil else { return nil }
        self.init(
            status: json["status"]?.int64Value.map { Int($0) }, code: json["code"]?.stringValue ?? "",
            message: json["message"]?.stringValue, details: json["details"]?.stringValue ?? "",
            action: json["action"]?.stringValue.flatMap(ErrorAction.init(rawValue:)))
    }

    /// The TempPass has run out (`temporary_access_*`).
    var endsTempPass: Bool { known?.endsTempPass == true }

    /// The login is gone at the backend: its action is `authentication`, or the device is not the login's.
    var endsLogin: Bool { action == .authentication || known == .deviceIdentifierMismatch }
}
