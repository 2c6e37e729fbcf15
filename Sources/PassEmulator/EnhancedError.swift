import Foundation
import JSON

/// REST API V2 enhanced error codes the emulator emits, with their HTTP status, action and message
/// (Adobe Pass, "Enhanced error codes"). `message` is sent as a string, as Adobe's examples do (the OpenAPI
/// document types it as an object).
public enum EnhancedError {
    /// The help URL Adobe's samples carry.
    public static let helpURL =
        "https://experienceleague.adobe.com/docs/pass/authentication/auth-features/error-reportn/enhanced-error-codes.html"

    static let table: [String: (status: Int, action: String, message: String)] = [
        "invalid_parameter_service_provider": (400, "none", "The service provider parameter value is missing or invalid."),
        "invalid_parameter_mvpd": (400, "none", "The mvpd parameter value is missing or invalid."),
        "invalid_parameter_code": (400, "none", "The code parameter value is missing or invalid."),
        "invalid_parameter_resources": (400, "none", "The resources parameter value is missing or invalid."),
        "invalid_parameter_redirect_url": (400, "none", "The redirect URL parameter value is missing or invalid."),
        "invalid_parameter_partner": (400, "none", "The partner parameter value is missing or invalid."),
        "invalid_parameter_saml_response": (400, "none", "The SAML response parameter value is missing or invalid."),
        "invalid_header_device_info": (400, "none", "The device information header value is missing or invalid."),
        "invalid_header_device_identifier": (400, "none", "The device identifier header value is missing or invalid."),
        "invalid_header_identity_for_temporary_access": (
            400, "none", "The identity for temporary access header value is missing or invalid."
        ),
        "invalid_header_pfs_permission_access_not_present": (
            400, "none", "The permission access status value from the partner framework status header is not present."
        ),
        "invalid_header_pfs_permission_access_not_determined": (
            400, "none", "The permission access status value from the partner framework status header is undetermined."
        ),
        "invalid_header_pfs_permission_access_not_granted": (
            400, "none", "The permission access status value from the partner framework status header is not granted."
        ),
        "invalid_header_pfs_provider_id_not_determined": (
            400, "none", "The provider id value from the partner framework status header is not associated with a known mvpd."
        ),
        "invalid_header_pfs_provider_id_mismatch": (
            400, "none", "The provider id value from the partner framework status header does not match the mvpd sent as parameter."
        ),
        "invalid_header_pfs_provider_info_expired": (
            400, "none", "The provider information from the partner framework status header has expired."
        ),
        "invalid_integration": (
            400, "none", "The integration between the specified service provider and mvpd does not exist or is disabled."
        ),
        "invalid_authentication_session": (400, "none", "The authentication session associated with this request is missing or invalid."),
        "preauthorization_denied_by_mvpd": (
            403, "none", "The MVPD has returned a \"Deny\" decision when requesting pre-authorization for the specified resource."
        ),
        "authorization_denied_by_mvpd": (
            403, "none", "The MVPD has returned a \"Deny\" decision when requesting authorization for the specified resource."
        ),
        "authorization_denied_by_degradation_rule": (
            403, "none", "The integration has an AuthZNone rule applied for the requested resources."
        ),
        "internal_server_error": (500, "none", "The request failed due to an internal server error."),
        "too_many_resources": (
            403, "configuration", "The authorization or preauthorization request failed because too many resources were queried."
        ),
        "invalid_access_token_service_provider": (
            401, "application-registration", "The access token is invalid due to invalid service provider."
        ),
        "invalid_access_token_client_application": (
            401, "application-registration", "The access token is invalid due to invalid client application."
        ),
        "authenticated_profile_missing": (403, "authentication", "The authenticated profile associated with this request is missing."),
        "authenticated_profile_expired": (403, "authentication", "The authenticated profile associated with this request has expired."),
        "temporary_access_duration_limit_exceeded": (403, "authentication", "The temporary access duration limit has been exceeded."),
        "temporary_access_resources_limit_exceeded": (403, "authentication", "The temporary access resources limit has been exceeded."),
        "network_received_error": (403, "retry", "Reading the partner service's answer failed; the request may succeed if retried."),
        "network_connection_timeout": (
            403, "retry", "The connection to the partner service timed out; the request may succeed if retried."
        ),
        "maximum_execution_time_exceeded": (
            403, "retry", "The request did not finish in the time allowed; the request may succeed if retried."
        ),
        // The rest of REST API V2's error enumeration (`ErrorInformation.code` in Adobe's OpenAPI document), so that
        // every code can be produced (`/__admin/item-errors`, the `error` fault): those of REST API v1's list with its
        // status and action, the others with those of their kind.
        "authorization_denied_by_parental_controls": (
            403, "none", "The MVPD has returned a \"Deny\" decision due to parental controls for the specified resource."
        ),
        "authorization_denied_by_degradation_configuration_change": (
            403, "none", "The degradation configuration of the integration changed; the authorization was denied."
        ),
        "invalid_refresh_token": (400, "application-registration", "The refresh token is missing or invalid."),
        "invalid_requestor": (400, "none", "The requestor parameter is missing or invalid."),
        "invalid_device_info": (400, "none", "The device information is missing or invalid."),
        "invalid_device_id": (400, "none", "The device identifier is missing or invalid."),
        "missing_resource": (400, "none", "The resource parameter is missing."),
        "malformed_authz_request": (400, "none", "The authorization request is null or invalid."),
        "internal_error": (500, "none", "The request failed due to an internal server error."),
        "invalid_configuration_user_metadata_certificate": (
            500, "configuration", "The user metadata certificate configuration is missing or invalid."
        ),
        "invalid_configuration_temporary_access": (500, "configuration", "The temporary access configuration is invalid."),
        "invalid_configuration_platform": (500, "configuration", "The platform configuration is missing or invalid for integration."),
        "invalid_configuration_platform_id": (500, "configuration", "The platform id configuration is missing or invalid."),
        "invalid_configuration_platform_trait": (500, "configuration", "The platform trait configuration is missing or invalid."),
        "invalid_configuration_platform_category_trait": (
            500, "configuration", "The platform category trait configuration is missing or invalid."
        ),
        "invalid_configuration_platform_services": (
            500, "configuration", "The platform services configuration is missing or invalid for integration."
        ),
        "invalid_configuration_mvpd_platform": (
            500, "configuration", "The mvpd platform configuration is missing or invalid for mvpd and platform."
        ),
        "invalid_configuration_mvpd_platform_boarding_status": (
            500, "configuration", "The mvpd platform boarding status configuration is missing or invalid for mvpd and platform."
        ),
        "invalid_configuration_mvpd_platform_profile_exchange": (
            500, "configuration", "The mvpd platform profile exchange configuration is missing or invalid for mvpd and platform."
        ),
        "unknown_integration": (
            412, "configuration", "The integration between the specified programmer and identity provider does not exist."
        ),
        "authenticated_profile_invalidated": (
            403, "authentication", "The authenticated profile associated with this request has been invalidated."
        ),
        "authorization_denied_by_hba_policies": (
            403, "authentication",
            "The MVPD has returned a \"Deny\" decision due to home-based authentication policies; the user must authenticate again."
        ),
        "authorization_denied_by_session_invalidated": (
            403, "authentication", "The authentication session was invalidated by the identity provider; the user must authenticate again."
        ),
        "identity_not_recognized_by_mvpd": (403, "authentication", "The user identity was not recognized by the MVPD."),
        "authentication_session_issuer_mismatch": (
            400, "authentication", "The MVPD of the authorization differs from the one that issued the authentication session."
        ),
        "authentication_session_invalidated": (
            403, "authentication", "The authentication session was invalidated by the identity provider; the user must authenticate again."
        ),
        "authentication_session_missing": (
            403, "authentication", "The authentication session associated with this request could not be retrieved."
        ),
        "authentication_session_expired": (403, "authentication", "The current authentication session has expired."),
        "preauthorization_authentication_session_missing": (
            412, "authentication", "The authentication session associated with this request could not be retrieved."
        ),
        "preauthorization_authentication_session_expired": (412, "authentication", "The current authentication session has expired."),
        "authorization_not_found": (404, "authorization", "No authorization was found for the specified resource."),
        "authorization_expired": (410, "authorization", "The previous authorization for the specified resource has expired."),
        "maximum_attempts_exceeded": (403, "none", "The request was refused after too many attempts."),
        "degraded_integration": (403, "none", "The integration is degraded; the request was refused."),
        // In Adobe's list of codes, not in REST API V2's enumeration.
        "device_identifier_mismatch": (
            403, "authorization", "The specified device identifier does not match the authorized device identifier."
        ),
    ]

    /// The error object for `code` (an unknown code becomes a 500 `internal_server_error` shape with that code).
    public static func object(_ code: String, details: String? = nil, status: Int? = nil) -> JSON {
        let entry = table[code] ?? (500, "none", "The request failed due to an internal server error.")
        var object: JSONObject = [
            "status": .integer(Int64(status ?? entry.status)),
            "code": .string(code),
            "message": .string(entry.message),
        ]
        if let details { object["details"] = .string(details) }
        object["helpUrl"] = .string(helpURL)
        object["trace"] = .string(UUID().uuidString.lowercased())
        object["action"] = .string(entry.action)
        return .object(object)
    }

    /// A top-level error response: the body is the error object and the HTTP status matches it.
    public static func response(_ code: String, details: String? = nil) -> HTTPResponse {
        let body = object(code, details: details)
        return .json(body["status"]?.intValue ?? 500, body)
    }
}

/// A handler's early exit carrying the response to send.
struct Failure: Error {
    let response: HTTPResponse
    init(_ response: HTTPResponse) { self.response = response }
    init(_ code: String, details: String? = nil) { self.response = EnhancedError.response(code, details: details) }
}
