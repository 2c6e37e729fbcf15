import JSON

// Single sign-on by platform identity and by service token (Adobe Pass REST API V2, "Single Sign-On - Platform
// Identity - Flows" and "Single Sign-On - Service Token - Flows"; Protocol/README.md): the tokens of
// `configuration.singleSignOn` go on sessions, profiles, decisions and logout (`Endpoint.singleSignOn`); an app
// that has no login of its own asks `GET profiles` whether its tokens already give one.
extension Engine {
    /// The profile types a single sign-on token gives.
    static let singleSignOnTypes: Set<String> = ["platformSSO", "serviceTokenSSO"]

    /// With single sign-on tokens and no stored login: the valid `platformSSO` / `serviceTokenSSO` profile that
    /// `GET profiles` answers for one of the requestor's MVPDs (the selected one first), stored as this
    /// instance's login and selected. nil without tokens, when the backend gives none, or when the call fails
    /// (the caller then goes on as without a login). Throws when the store cannot keep it.
    func singleSignOnProfile(_ requestor: Requestor) async throws -> Profile? {
        guard !configuration.singleSignOn.isEmpty else { return nil }
        let selected = shared.withLock { $0.selectedMVPD?.ID }
        let ids = Set(requestor.mvpds.map(\.ID))
        let now = clock.nowMillis()
        // Each service provider of the requestor answers for its own MVPDs.
        var clients: [ObjectIdentifier: RestClient] = [ObjectIdentifier(requestor.primary): requestor.primary]
        for client in requestor.clients.values { clients[ObjectIdentifier(client)] = client }
        var found: [Profile] = []
        for client in clients.values {
            guard let answer = await call(RESTV2.profiles(requestor.id), with: client).value else { continue }
            for (mvpd, json) in answer.profiles where ids.contains(mvpd) && json.objectValue != nil {
                let profile = Profile(mvpd: mvpd, json: json)
                if let type = profile.type, Self.singleSignOnTypes.contains(type), profile.notAfter > now { found.append(profile) }
            }
        }
        guard let profile = found.first(where: { $0.mvpd == selected }) ?? found.max(by: { $0.notAfter < $1.notAfter }) else {
            return nil
        }
        try await saveProfile(profile, requestor)
        select(requestor.mvpd(profile.mvpd), requestor)
        return profile
    }
}
