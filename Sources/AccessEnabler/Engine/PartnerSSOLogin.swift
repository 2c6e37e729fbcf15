import JSON

extension Engine {
    // MARK: getAuthentication with partner SSO (Adobe's "Apple SSO Cookbook (REST API V2)", step 4)

    /// The partner part of a login flow started by getAuthentication (or getAuthorization). It asks the host for
    /// access (may prompt), shows the platform's picker (presentTvProviderDialog … dismissTvProviderDialog) and
    /// exchanges the account for a profile. Otherwise it falls back to the regular flow:
    /// - VSA403 / VSA404 (access), VSA503 (platform service problem), APPL_ERROR (other host error),
    ///   N003 ("Other TV Provider"), N004 (provider this requestor does not support), N005 (platform picker
    ///   cancelled): that status, then displayProviderDialog;
    /// - a provider in the platform picker without partner SSO (PICKER boarding, or the backend's
    ///   `configuration_fallback` / `pfs_fallback` naming an MVPD): setSelectedProvider silently → navigateToUrl
    ///   (or REGCODE), no status.
    /// The flow ends, as every login flow, with setAuthenticationStatus.
    func partnerLogin(_ requestor: Requestor, mvpds: [MVPD], filter: ProviderFilter?, flowID: Int) async {
        guard let provider = configuration.partnerSSO else { return }
        let timeout = configuration.partnerSSOTimeout
        let access = await PartnerCall.run(timeout: timeout, on: executor) { try await provider.checkAccessStatus(prompt: true) }
        guard isPartnerStep(flowID) else { return }
        switch access {
        case .failure(let error):
            return partnerFallBack(Self.partnerStatus(error, interactive: true), mvpds: mvpds, flowID: flowID)
        case .success(let status) where status != .granted:
            machine.partnerAccount = PartnerAccount(access: status, metadata: nil, requestor: requestor)
            return partnerFallBack(Self.accessStatus(status), mvpds: mvpds, flowID: flowID)
        case .success:
            break
        }
        let lists = partnerProviderLists(requestor, filter: filter)
        let request = PartnerAccountMetadataRequest(
            interruptionAllowed: true, supportedProviderIds: lists.supported, featuredProviderIds: lists.featured)
        machine.platformPickerFlow = flowID
        delegate.presentTvProviderDialog()
        let answer = await PartnerCall.run(timeout: timeout, on: executor) { try await provider.requestAccountMetadata(request) }
        dismissPlatformPicker(of: flowID)
        guard isPartnerStep(flowID) else {
            configuration.log?(.debug, "partnerSSO/requestAccountMetadata answered for login \(flowID), which has ended: ignored")
            return
        }
        let metadata: PartnerAccountMetadata
        switch answer {
        case .failure(let error) where error.reason == .unsupportedProvider:
            guard let id = error.unsupportedProviderIdentifier else {
                return partnerFallBack(
                    AdvancedStatus(.n003), mvpds: mvpds,
                    flowID: flowID)
            }
            guard let mvpd = requestor.mvpds.first(where: { $0.platformMappingId == id }) else {
                return partnerFallBack(Self.partnerStatus(error, interactive: true), mvpds: mvpds, flowID: flowID)
            }
            return await selectSilently(mvpd, flowID: flowID)
        case .failure(let error):
            return partnerFallBack(Self.partnerStatus(error, interactive: true), mvpds: mvpds, flowID: flowID)
        case .success(let value):
            metadata = value
        }
        let account = PartnerAccount(access: .granted, metadata: metadata, requestor: requestor)
        machine.partnerAccount = account
        guard let mvpd = account.mvpd, mvpd.enablePlatformServices else {
            let status =
                metadata.providerId == nil
                ? AdvancedStatus(.n005, message: "No TV provider was chosen in the platform picker")
                : Self.partnerStatus(PartnerSSOError(.unsupportedProvider), interactive: true)
            return partnerFallBack(status, mvpds: mvpds, flowID: flowID)
        }
        if mvpd.boardingStatus == "PICKER" { return await selectSilently(mvpd, flowID: flowID) }
        let exchange = await partnerExchange(requestor, account: account, interactive: true, flow: flowID)
        guard isPartnerStep(flowID) else { return }
        switch exchange {
        case .profile(let profile):
            _ = await loginSucceeded(profile, requestor)
        case .fallback(let session):
            if session.action == .authenticate, let named = session.mvpd.flatMap(requestor.mvpd) {
                return await selectSilently(named, flowID: flowID)
            }
            partnerFallBack(nil, mvpds: mvpds, flowID: flowID)
        case .failed(let status):
            partnerFallBack(status, mvpds: mvpds, flowID: flowID)
        }
    }

    /// dismissTvProviderDialog, once, while login `flow`'s platform picker is up: when the host answers, or as soon
    /// as the login ends or moves on without that answer (a cancel, a setSelectedProvider), so that the picker never
    /// outlives its login; a late answer for a login already ended leaves the next login's picker alone
    /// (Protocol/README.md, "Partner single sign-on").
    func dismissPlatformPicker(of flow: Int?) {
        guard let flow, machine.platformPickerFlow == flow else { return }
        machine.platformPickerFlow = nil
        delegate.dismissTvProviderDialog()
    }

    /// Whether flow `flowID` is still in its partner step (not cancelled, not taken over by setSelectedProvider).
    private func isPartnerStep(_ flowID: Int) -> Bool { machine.isPartnerStep(flowID) }

    /// The regular picker: the status explaining why (if any), then displayProviderDialog.
    private func partnerFallBack(_ status: AdvancedStatus?, mvpds: [MVPD], flowID: Int) {
        machine.providerDialogShown(flow: flowID)
        if let status { delegate.status(status) }
        delegate.displayProviderDialog(mvpds)
    }

    /// The SDK calls setSelectedProvider itself for a platform-picker provider without partner SSO.
    private func selectSilently(_ mvpd: MVPD, flowID: Int) async {
        machine.providerDialogShown(flow: flowID)
        _ = await setSelectedProvider(mvpd.ID)
    }
}
