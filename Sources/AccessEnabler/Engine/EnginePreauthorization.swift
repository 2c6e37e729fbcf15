import FoundationEssentials
import JSON

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
            var updated = cached
            for (resource, decision) in asked.decisions {
                if decision.authorized == true { updated.insert(resource) } else { updated.remove(resource) }
            }
            preauthorized[key] = updated
            permitted = Set(asked.decisions.filter { $0.value.authorized == true }.map(\.key))
            let degraded = asked.decisions.values.contains { $0.authorized == true && $0.source == "degradation" }
            if degraded {
                statuses.append(AdvancedStatus(id: "Z010", level: "warning", message: "Preauthorized under a degradation rule"))
            }
            if !asked.unanswered.isEmpty {
                let details = "No decision for \(asked.unanswered.count) of \(unique.count) resources"
                statuses.append(AdvancedStatus(id: "P100", level: "error", message: "Preauthorization failed", details: details))
            }
        }
        let authorized = unique.filter(permitted.contains)
        delegate.preauthorizedResources(authorized)
        for status in statuses { delegate.status(status) }
        return authorized
    }

    /// The decisions of `resources` (distinct, in the caller's order), asked in as many calls as the backend
    /// takes: the whole list at once until a `too_many_resources` refusal, then chunks of at most
    /// ``usualPreauthorizeLimit`` (one fewer after each further refusal), a size kept for the requestor. Items
    /// whose decision says `action: retry` are asked again, alone, at most ``preauthorizeRetries`` times.
    /// `unanswered`: the resources left without a decision (their call failed, or they still say retry).
    private func preauthorize(
        _ resources: [String], requestor: Requestor, profile: Profile
    ) async -> (decisions: [String: Decision], unanswered: [String]) {
        let headers = await partnerHeaders(requestor, profile: profile) + identityHeaders
        var decisions: [String: Decision] = [:]
        var unanswered = await preauthorizeInChunks(resources, requestor: requestor, profile: profile, headers: headers, into: &decisions)
        for _ in 0..<Self.preauthorizeRetries {
            let retry = resources.filter { decisions[$0]?.error?.action == "retry" }
            guard !retry.isEmpty else { break }
            try? await Task.sleep(for: .milliseconds(300))
            unanswered += await preauthorizeInChunks(retry, requestor: requestor, profile: profile, headers: headers, into: &decisions)
        }
        let stillRetry = resources.filter { decisions[$0]?.error?.action == "retry" }
        for resource in stillRetry { decisions[resource] = nil }
        let missing = Set(unanswered + stillRetry)
        return (decisions, resources.filter(missing.contains))
    }

    /// One pass over `resources` in chunks; answered decisions go into `decisions` (replacing earlier ones).
    /// Returns the resources of the chunks that got no answer.
    private func preauthorizeInChunks(
        _ resources: [String], requestor: Requestor, profile: Profile, headers: [(String, String)],
        into decisions: inout [String: Decision]
    ) async -> [String] {
        var unanswered: [String] = []
        var index = 0
        while index < resources.count {
            let size = max(1, preauthorizeChunkSize[requestor.id] ?? resources.count)
            let chunk = Array(resources[index..<min(index + size, resources.count)])
            let answer = await call(
                RESTV2.preauthorize(requestor.id, mvpd: profile.mvpd, resources: chunk, headers: headers),
                with: requestor.client(for: profile.mvpd))
            if case .httpError = answer.result, answer.error?.code == "too_many_resources", chunk.count > 1 {
                preauthorizeChunkSize[requestor.id] = min(Self.usualPreauthorizeLimit, chunk.count - 1)
                continue
            }
            index += chunk.count
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
