import JSON

/// What the engine last learned from the host about the platform's TV-provider account.
struct PartnerAccount: Sendable {
    var access: PartnerAccessStatus
    var metadata: PartnerAccountMetadata?
    /// The requestor's MVPD whose platformMappingId is the account's provider.
    var mvpd: MVPD?
    /// `AP-Partner-Framework-Status` built from these answers (`RESTV2.partnerFrameworkStatus`).
    var header: String

    init(access: PartnerAccessStatus, metadata: PartnerAccountMetadata?, requestor: Requestor) {
        self.access = access
        self.metadata = metadata
        mvpd = metadata?.providerId.flatMap { id in requestor.mvpds.first { $0.platformMappingId == id } }
        header = Self.header(access: access, metadata: metadata)
    }

    /// The `AP-Partner-Framework-Status` value for the host's answers.
    static func header(access: PartnerAccessStatus, metadata: PartnerAccountMetadata?) -> String {
        RESTV2.partnerFrameworkStatus(
            accessStatus: access.rawValue, providerID: metadata?.providerId, expirationDate: metadata?.authenticationExpirationDate)
    }

    /// Granted, signed in with a provider of this requestor, and the platform's authentication not over.
    func isSignedIn(now: Int64) -> Bool {
        access == .granted && mvpd != nil && (metadata?.authenticationExpirationDate ?? 0) > now
    }
}

/// How a partner exchange (PS1, the SAML answer, PS2) ended.
enum PartnerExchange {
    case profile(Profile)
    /// PS1 answered with the regular flow (`pfs_fallback`, `configuration_fallback`, …): its session answer.
    case fallback(SessionAnswer)
    /// Nothing usable; the status, when the host is the cause.
    case failed(AdvancedStatus?)
}

extension Profile {
    /// A profile from a partner login (`type: appleSSO`): its calls carry `AP-Partner-Framework-Status`.
    var isPartner: Bool { type == "appleSSO" }
}

extension Engine {
    static let partnerHeaderName = RESTV2.partnerFrameworkStatusHeader

    /// Partner SSO applies when the host provides it and the requestor has an MVPD boarded for platform services.
    func partnerApplies(_ requestor: Requestor) -> Bool {
        configuration.partnerSSO != nil && requestor.mvpds.contains { $0.enablePlatformServices && $0.platformMappingId != nil }
    }

    /// The picker lists sent to the host: platformMappingIds of MVPDs with platform services, and the featured ones.
    func partnerProviderLists(_ requestor: Requestor, filter: ProviderFilter? = nil) -> (supported: [String], featured: [String]) {
        let boarded = requestor.mvpds.filter { $0.enablePlatformServices }
        func platformIDs(_ chosen: [String]?, otherwise: [MVPD]) -> [String] {
            guard let chosen else { return otherwise.compactMap(\.platformMappingId) }
            return chosen.compactMap { id in boarded.first { $0.ID == id }?.platformMappingId }
        }
        return (
            platformIDs(filter?.tvProviders, otherwise: boarded),
            platformIDs(filter?.featuredTVProviders, otherwise: boarded.filter(\.displayInPlatformPicker))
        )
    }

    // MARK: the background check (cookbook steps 2 and 3)

    /// Asks the host without interrupting the user; remembers the account (and its header) for later calls.
    /// The status is VSA403 (denied, restricted), VSA404 (not determined) or APPL_ERROR (the host failed).
    func partnerBackgroundCheck(_ requestor: Requestor) async -> (account: PartnerAccount?, status: AdvancedStatus?) {
        guard let provider = configuration.partnerSSO else { return (nil, nil) }
        let timeout = configuration.partnerSSOTimeout
        let access = await PartnerCall.run(timeout: timeout, on: executor) { try await provider.checkAccessStatus(prompt: false) }
        let accessStatus: PartnerAccessStatus
        switch access {
        case .failure(let error):
            machine.partnerAccount = nil
            return (nil, Self.partnerStatus(error, interactive: false))
        case .success(let value):
            accessStatus = value
        }
        guard accessStatus == .granted else {
            let account = PartnerAccount(access: accessStatus, metadata: nil, requestor: requestor)
            machine.partnerAccount = account
            return (account, Self.accessStatus(accessStatus))
        }
        let lists = partnerProviderLists(requestor)
        let request = PartnerAccountMetadataRequest(
            interruptionAllowed: false, supportedProviderIds: lists.supported, featuredProviderIds: lists.featured)
        switch await PartnerCall.run(timeout: timeout, on: executor, { try await provider.requestAccountMetadata(request) }) {
        case .failure(let error):
            machine.partnerAccount = PartnerAccount(access: .granted, metadata: nil, requestor: requestor)
            return (machine.partnerAccount, Self.partnerStatus(error, interactive: false))
        case .success(let metadata):
            let account = PartnerAccount(access: .granted, metadata: metadata, requestor: requestor)
            machine.partnerAccount = account
            return (account, nil)
        }
    }

    /// setRequestor's part (cookbook step 2): the background check, then, when the user has no valid profile and
    /// every condition holds, a silent exchange. No callback here; the status (if any) follows setRequestorComplete:
    /// the check's VSA403, VSA404 or APPL_ERROR, or, when the exchange's own host call failed (the SAML request, or
    /// an answer without a SAML response), APPL_ERROR (VSA403 for a refused access). A backend that refuses PS1 or
    /// PS2 raises none: that is no error between the device and the platform.
    /// - Throws: a store failure (the stored profiles are then left as they were).
    func partnerSetRequestor(_ requestor: Requestor) async throws -> AdvancedStatus? {
        // A closed instance (its host went away, a later init replaced it) asks the platform nothing.
        guard partnerApplies(requestor), !machine.closed else {
            try await synchronizeProfiles(requestor)
            return nil
        }
        let check = await partnerBackgroundCheck(requestor)
        try await synchronizeProfiles(requestor)
        guard let account = check.account, account.isSignedIn(now: clock.nowMillis()), try await currentProfile(requestor) == nil else {
            return check.status
        }
        switch await partnerExchange(requestor, account: account, interactive: false) {
        case .profile(let profile):
            guard !machine.closed else { return check.status }
            try await saveProfile(profile, requestor)
            select(requestor.mvpd(profile.mvpd), requestor)
        case .failed(let status?):
            return check.status ?? status
        case .failed(nil), .fallback:
            break
        }
        return check.status
    }

    /// checkAuthentication's part (cookbook step 3) when there is no profile or a partner one: whether a partner
    /// profile still stands, and the status replacing N000 (VSA403, VSA404, APPL_ERROR), if any. A partner profile
    /// of an MVPD whose configuration no longer has platform services (single sign-on disabled for it) does not
    /// stand, whatever the platform's account says.
    func partnerAuthenticationCheck(_ requestor: Requestor, profile: Profile?) async -> (valid: Bool, status: AdvancedStatus?) {
        if let profile, profile.isPartner, requestor.mvpd(profile.mvpd)?.enablePlatformServices != true {
            guard partnerApplies(requestor) else { return (false, nil) }
            return (false, await partnerBackgroundCheck(requestor).status)
        }
        guard partnerApplies(requestor) else { return (profile != nil, nil) }
        let check = await partnerBackgroundCheck(requestor)
        guard let profile else { return (false, check.status) }
        let valid = check.account.map { $0.isSignedIn(now: clock.nowMillis()) && $0.mvpd?.ID == profile.mvpd } ?? false
        return (valid, check.status)
    }

    /// The extra headers of a call for `mvpd`'s profile: the partner status for a partner profile (§10.3: profile
    /// and decision calls on an appleSSO profile carry a current one), asked again when none is known.
    func partnerHeaders(_ requestor: Requestor, profile: Profile) async -> [(String, String)] {
        guard profile.isPartner, configuration.partnerSSO != nil else { return [] }
        if let account = machine.partnerAccount, account.mvpd?.ID == profile.mvpd, account.isSignedIn(now: clock.nowMillis()) {
            return [(Self.partnerHeaderName, account.header)]
        }
        let account = await partnerBackgroundCheck(requestor).account
        return account.map { [(Self.partnerHeaderName, $0.header)] } ?? []
    }

    /// The remembered header for a stored partner profile of `mvpd`; nil when the account names another provider.
    func partnerHeader(for mvpd: String) -> (String, String)? {
        guard let account = machine.partnerAccount, account.mvpd?.ID == mvpd else { return nil }
        return (Self.partnerHeaderName, account.header)
    }

    // MARK: the exchange (Adobe Pass REST API V2, "Partner Single Sign-On APIs")

    /// PS1 with the account's header; on `partner_profile` the SAML answer from the host, then PS2.
    /// `flow`: the login the exchange is made for (interactive), which the statuses it raises explain.
    func partnerExchange(_ requestor: Requestor, account: PartnerAccount, interactive: Bool, flow: Int? = nil) async -> PartnerExchange {
        guard let provider = configuration.partnerSSO, let mvpd = account.mvpd else { return .failed(nil) }
        let client = requestor.client(for: mvpd.ID)
        let started = await call(
            RESTV2.partnerSession(requestor.id, partner: provider.partner, redirectURL: configuration.redirectURL, status: account.header),
            with: client, flow: flow)
        guard let session = started.value else { return .failed(nil) }
        switch session.action {
        case .partnerProfile:
            break
        case .authorize:
            let mvpdID = session.mvpd ?? mvpd.ID
            let profiles = await call(
                RESTV2.profile(requestor.id, mvpd: mvpdID, headers: [(Self.partnerHeaderName, account.header)]), with: client, flow: flow)
            if let profile = profiles.value?.first(preferring: mvpdID) { return .profile(profile) }
            return .failed(nil)
        case .authenticate, .other:
            return .fallback(session)
        }
        let lists = partnerProviderLists(requestor)
        let request = PartnerAccountMetadataRequest(
            interruptionAllowed: interactive, verificationToken: session.partnerRequest, attributeNames: session.attributeNames,
            supportedProviderIds: lists.supported, featuredProviderIds: lists.featured)
        let answer = await PartnerCall.run(timeout: configuration.partnerSSOTimeout, on: executor) {
            try await provider.requestAccountMetadata(request)
        }
        let saml: String
        switch answer {
        case .failure(let error):
            return .failed(Self.partnerStatus(error, interactive: interactive))
        case .success(let metadata):
            guard let response = metadata.samlAttributeQueryResponse, !response.isEmpty else {
                let message = "The platform gave no SAML response"
                return .failed(interactive ? Self.vsa503(message) : Self.applError(details: message))
            }
            saml = response
        }
        let created = await call(
            RESTV2.partnerProfile(requestor.id, partner: provider.partner, samlResponse: saml, status: account.header), with: client,
            flow: flow)
        if let profile = created.value?.first(preferring: mvpd.ID) { return .profile(profile) }
        return .failed(nil)
    }

    /// The SAML response as PS2 wants it: `RESTV2.encodeSAML`.
    static func encodeSAML(_ xml: String) -> String { RESTV2.encodeSAML(xml) }

    // MARK: advanced statuses (Adobe's "Apple SSO Cookbook (REST API V2)", error reporting)

    static func accessStatus(_ access: PartnerAccessStatus) -> AdvancedStatus? {
        switch access {
        case .granted: return nil
        case .denied, .restricted:
            return AdvancedStatus(.vsa403)
        case .notDetermined:
            return AdvancedStatus(.vsa404)
        }
    }

    static func vsa503(_ message: String) -> AdvancedStatus {
        AdvancedStatus(.vsa503, message: message)
    }

    /// A host error as a status. In the background (steps 2, 3) everything but a refused access is APPL_ERROR;
    /// in getAuthentication (step 4) a service problem is VSA503 and a cancel N005.
    /// APPL_ERROR: the platform's account request failed, `details` saying how.
    static func applError(details: String?) -> AdvancedStatus {
        AdvancedStatus(.appl, details: details)
    }

    static func partnerStatus(_ error: PartnerSSOError, interactive: Bool) -> AdvancedStatus {
        let appl = applError(details: error.message)
        switch error.reason {
        case .accessNotGranted:
            return accessStatus(.denied)!
        case .userCancelled where interactive:
            return AdvancedStatus(.n005)
        case .unsupportedProvider where interactive:
            return AdvancedStatus(.n004)
        case .serviceTemporarilyUnavailable, .providerRejected, .invalidVerificationToken:
            return interactive ? vsa503(error.message ?? "The platform's account request failed (\(error.reason.rawValue))") : appl
        case .other, .userCancelled, .unsupportedProvider:
            return appl
        }
    }
}
