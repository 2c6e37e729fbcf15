import Foundation
import JSON

/// The decoded `AP-Partner-Framework-Status` header (Adobe Pass REST API V2, "Partner Single Sign-On"): base64 of
/// `{frameworkPermissionInfo: {accessStatus}, frameworkProviderInfo: {id, expirationDate}}`.
struct PartnerFrameworkStatus {
    /// `granted`, `denied`, `restricted`, `notDetermined`, or nil when absent or unreadable.
    var accessStatus: String?
    /// The provider's platformMappingId.
    var providerID: String?
    /// Provider info expiry in ms (sent as a string of digits; a number is accepted too).
    var expirationDate: Int64?

    /// nil when the header is absent; an unreadable header decodes to an empty status (→ not_present).
    init?(header: String?) {
        guard let header else { return nil }
        guard let data = Base64.decode(header) ?? Base64.decodeURL(header), let json = try? JSON.parse([UInt8](data)) else { return }
        accessStatus = json["frameworkPermissionInfo"]?["accessStatus"]?.stringValue
        providerID = json["frameworkProviderInfo"]?["id"]?.stringValue
        let expiry = json["frameworkProviderInfo"]?["expirationDate"]
        expirationDate = expiry?.stringValue.flatMap { Int64($0) } ?? expiry?.int64Value
    }

    /// The MVPD the status vouches for, or the documented `invalid_header_pfs_*` error.
    func validate(_ sp: ServiceProviderConfig, now: Int64) throws(Failure) -> MVPDConfig {
        switch accessStatus {
        case nil: throw Failure("invalid_header_pfs_permission_access_not_present")
        case "granted": break
        case "notDetermined": throw Failure("invalid_header_pfs_permission_access_not_determined")
        default: throw Failure("invalid_header_pfs_permission_access_not_granted")
        }
        guard let providerID, let mvpd = sp.mvpd(platformMappingId: providerID) else {
            throw Failure("invalid_header_pfs_provider_id_not_determined")
        }
        guard let expirationDate, expirationDate > now else { throw Failure("invalid_header_pfs_provider_info_expired") }
        return mvpd
    }
}

extension Emulator {
    /// The MVPD a valid `AP-Partner-Framework-Status` names, else nil (an invalid header just hides appleSSO profiles).
    func partnerMVPD(_ request: HTTPRequest, _ caller: Caller) -> MVPDConfig? {
        guard let status = PartnerFrameworkStatus(header: request.header("ap-partner-framework-status")) else { return nil }
        return try? status.validate(caller.serviceProvider, now: caller.now)
    }
}
