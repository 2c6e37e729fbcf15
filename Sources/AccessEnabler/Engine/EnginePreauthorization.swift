import FoundationEssentials
import JSON
import ThreadAffinity

// checkPreauthorizedResources (Adobe's "iOS/tvOS API Reference"; Adobe Pass REST API V2, "Retrieve
// preauthorization decisions using specific mvpd" and "Enhanced Error Codes": client handling). What the host
// sees is in Protocol/README.md, "Preauthorization".
extension Engine {
    /// Adobe's usual limit of resources per preauthorize call ("Decisions"), the chunk size tried after the
    /// backend refused a longer list with `too_many_resources`.
    static let usualPreauthorizeLimit = 5

    /// How many more times the items whose decision says `action: retry` are asked for.
    static let preauthorizeRetries = 2

    public func checkPreauthorizedResources(_ resources: [String], cache: Bool) async -> [String] {
        let turn = await ready(.checkPreauthorizedResources)
        defer { endTurn(turn) }
        guard let requestor = turn.requestor, !resources.isEmpty else {
            delegate.preauthorizedResources([])
            return []
        }
        let profile: Profile
        do {
            guard let current = try await currentProfile(requestor) else {
                delegate.preauthorizedResources([])
                return []
            }
            profile = current
        } catch {
            delegate.preauthorizedResources([])
            delegate.status(storeFailure(error))
            return []
        }
        // Permits are cached in memory only and decisions never persisted (Adobe's rule); a resource not known
        // to be permitted is asked for again.
        let key = profileKey(requestor, profile.mvpd)
        var seen = Set<String>()
        let unique = resources.filter { seen.insert($0).inserted }
        let cached = preauthorized[key] ?? []
        var statuses: [AdvancedStatus] = []
        let permitted: Set<String>
        if cache && unique.allSatisfy(cached.contains) {
            permitted = cached
        } else {
            let asked = await preauthorize(unique, requestor: requestor, profile: profile)
            if let gone = asked.loginGone {
                return await preauthorizationLoggedOut(gone, requestor: requestor, profile: profile)
            }
            var updated = cached
            for (resource, decision) in asked.decisions {
                if decision.authorized == true { updated.insert(resource) } else { updated.remove(resource) }
            }
            preauthorized[key] = updated
            permitted = Set(asked.decisions.filter { $0.value.authorized == true }.map(\.key))
            let degraded = asked.decisions.values.contains { $0.authorized == true && $0.source == "degradation" }
            if degraded {
                statuses.append(AdvancedStatus(.z010, message: "Preauthorized under a degradation rule"))
            }
            if !asked.unanswered.isEmpty {
                let details = "No decision for \(asked.unanswered.count) of \(unique.count) resources"
                statuses.append(AdvancedStatus(.p100, details: details))
            }
        }
        let authorized = unique.filter(permitted.contains)
        delegate.preauthorizedResources(authorized)
        for status in statuses { delegate.status(status) }
        return authorized
    }

    /// An error whose action is `authentication` answered the preauthorization: the login is gone at the backend.
    /// It is forgotten here too, the host is told (setAuthenticationStatus(0)), nothing is preauthorized, and N130
    /// (N111 for a TempPass run out) says why.
    private func preauthorizationLoggedOut(_ error: EnhancedError, requestor: Requestor, profile: Profile) async -> [String] {
        do {
            try await deleteProfile(profile.mvpd, requestor)
        } catch {
            delegate.preauthorizedResources([])
            delegate.status(storeFailure(error))
            return []
        }
        announce(AccessEnablerStatus.error, errorCode: SDKErrorCode.userNotAuthenticated)
        delegate.preauthorizedResources([])
        delegate.status(AdvancedStatus(Self.loggedOutStatus(error), message: error.message))
        return []
    }

    /// The decisions of `resources` (distinct, in the caller's order), asked in as many calls as the backend
    /// takes: the whole list at once until a `too_many_resources` refusal, then chunks of at most
    /// ``usualPreauthorizeLimit`` (one fewer after each further refusal), a size kept for the requestor. Items
    /// whose decision says `action: retry` are asked again, alone, at most ``preauthorizeRetries`` times.
    /// `unanswered`: the resources left without a decision (their call failed, or they still say retry);
    /// `loginGone`: an error, top-level or of an item, whose action is `authentication`.
    private func preauthorize(
        _ resources: [String], requestor: Requestor, profile: Profile
    ) async -> (decisions: [String: Decision], unanswered: [String], loginGone: EnhancedError?) {
        let headers = await partnerHeaders(requestor, profile: profile) + machine.tempPassIdentity
        var decisions: [String: Decision] = [:]
        var gone: EnhancedError?
        var unanswered = await preauthorizeInChunks(
            resources, requestor: requestor, profile: profile, headers: headers, into: &decisions, loginGone: &gone)
        for _ in 0..<Self.preauthorizeRetries {
            let retry = resources.filter { decisions[$0]?.error?.action == .retry }
            guard !retry.isEmpty else { break }
            await uncancelledSleep(for: .milliseconds(300), on: executor)
            unanswered += await preauthorizeInChunks(
                retry, requestor: requestor, profile: profile, headers: headers, into: &decisions, loginGone: &gone)
        }
        let stillRetry = resources.filter { decisions[$0]?.error?.action == .retry }
        for resource in stillRetry { decisions[resource] = nil }
        let missing = Set(unanswered + stillRetry)
        let itemGone = decisions.values.lazy.compactMap(\.error).first { $0.endsLogin }
        return (decisions, resources.filter(missing.contains), gone ?? itemGone)
    }

    /// One pass over `resources` in chunks; answered decisions go into `decisions` (replacing earlier ones).
    /// Returns the resources of the chunks that got no answer; a top-level error whose action is `authentication`
    /// goes into `loginGone`.
    private func preauthorizeInChunks(
        _ resources: [String], requestor: Requestor, profile: Profile, headers: [(String, String)],
        into decisions: inout [String: Decision], loginGone: inout EnhancedError?
    ) async -> [String] {
        var unanswered: [String] = []
        var index = 0
        while index < resources.count {
            let size = max(1, preauthorizeChunkSize[requestor.id] ?? resources.count)
            let chunk = Array(resources[index..<min(index + size, resources.count)])
            let answer = await call(
                RESTV2.preauthorize(requestor.id, mvpd: profile.mvpd, resources: chunk, headers: headers),
                with: requestor.client(for: profile.mvpd))
            if case .httpError = answer.result, answer.error?.known == .tooManyResources, chunk.count > 1 {
                preauthorizeChunkSize[requestor.id] = min(Self.usualPreauthorizeLimit, chunk.count - 1)
                continue
            }
            index += chunk.count
            if let error = answer.error, error.endsLogin { loginGone = error }
            guard let answered = answer.value?.decisions else {
                unanswered += chunk
                continue
            }
            let asked = Set(chunk)
            var echoed = Set<String>()
            for decision in answered {
                guard let resource = decision.resource, asked.contains(resource) else { continue }
                decisions[resource] = decision
                echoed.insert(resource)
            }
            unanswered += chunk.filter { !echoed.contains($0) }
        }
        return unanswered
    }
}
