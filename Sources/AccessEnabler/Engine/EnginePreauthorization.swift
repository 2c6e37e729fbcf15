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

    public func checkPreauthorizedResources(_ resources: [String], cache: Bool) async -> PreauthorizedResources {
        let turn = await ready(.checkPreauthorizedResources)
        defer { endTurn(turn) }
        guard let requestor = turn.requestor else {
            return preauthorized([], statuses: [], reasons: machine.reasons([], ofLogin: false))
        }
        guard !resources.isEmpty else { return preauthorized([], statuses: []) }
        let profile: Profile
        do {
            guard let current = try await currentProfile(requestor) else { return preauthorized([], statuses: []) }
            profile = current
        } catch {
            return preauthorized([], statuses: [storeFailure(error)])
        }
        // Permits are cached in memory only and decisions never persisted (Adobe's rule); a resource not known
        // to be permitted is asked for again.
        let key = profileKey(requestor, profile.mvpd)
        let unique = Self.distinct(resources)
        let cached = permits[key]
        var statuses: [AdvancedStatus] = []
        let permitted: Set<ResourceID>
        if cache && unique.allSatisfy(cached.contains) {
            permitted = cached
        } else {
            let generation = permits.generation
            let asked = await preauthorize(unique, requestor: requestor, profile: profile)
            if let gone = asked.loginGone {
                return await loggedOut(gone, requestor, profile)
            }
            permits.record(asked.decisions, for: key, askedAt: generation)
            permitted = Set(asked.decisions.filter { $0.value.authorized == true }.map(\.key))
            let degraded = asked.decisions.values.contains { $0.authorized == true && $0.source == "degradation" }
            if degraded {
                statuses.append(AdvancedStatus(.z010, message: "Preauthorized under a degradation rule"))
            }
            if !asked.unanswered.isEmpty {
                // Why, when the backend said it: each distinct error object that refused a chunk.
                var why: [String] = []
                for refusal in asked.unanswered.compactMap({ asked.refusals[$0] }) {
                    let reason = refusal.code + (refusal.message.map { " (\($0))" } ?? "")
                    if !why.contains(reason) { why.append(reason) }
                }
                let details =
                    "No decision for \(asked.unanswered.count) of \(unique.count) resources"
                    + (why.isEmpty ? "" : ": " + why.joined(separator: "; "))
                statuses.append(AdvancedStatus(.p100, details: details))
            }
        }
        return preauthorized(unique.filter(permitted.contains).map(\.text), statuses: statuses)
    }

    /// checkPreauthorizedResources's end: `preauthorizedResources(resources)`, then each status as its own
    /// notification (`reasons`, a failed setRequestor's, only in the result, which carries the warnings and errors
    /// of both; Protocol/README.md "Failure reasons").
    private func preauthorized(
        _ resources: [String], statuses: [AdvancedStatus], reasons: [AdvancedStatus] = []
    ) -> PreauthorizedResources {
        delegate.preauthorizedResources(resources)
        for status in statuses { delegate.status(status) }
        return PreauthorizedResources(resources: resources, statuses: (statuses + reasons).filter(\.isReason))
    }

    /// The iOS SDK's `preauthorize` (Protocol/README.md, "Preauthorization"): the decisions asked as
    /// checkPreauthorizedResources asks them (chunks, retries), each resource with its own decision and error; no
    /// delegate callback but setAuthenticationStatus(0) when the backend says the login is gone.
    public func preauthorize(_ resources: [String], localCache: Bool) async -> PreauthorizeResponse {
        let turn = await ready(.preauthorize)
        defer { endTurn(turn) }
        let unique = Self.distinct(resources)
        func refused(_ code: String, action: String, message: String) -> PreauthorizeResponse {
            let error = PreauthorizeError(status: 0, code: code, message: message, action: action)
            return PreauthorizeResponse(status: error, decisions: unique.map { .init(id: $0.text, authorized: false, error: error) })
        }
        guard let requestor = turn.requestor else {
            return refused("requestor_not_configured", action: "retry", message: "No requestor is configured (setRequestor)")
        }
        let profile: Profile
        do {
            guard let current = try await currentProfile(requestor) else {
                return refused("authentication_session_missing", action: "authentication", message: "The user is not authenticated")
            }
            profile = current
        } catch {
            return refused("storage_failure", action: "retry", message: storeFailure(error).message ?? "The device's store failed")
        }
        let key = profileKey(requestor, profile.mvpd)
        let cached = permits[key]
        let generation = permits.generation
        if localCache, !unique.isEmpty, unique.allSatisfy(cached.contains) {
            return PreauthorizeResponse(status: nil, decisions: unique.map { .init(id: $0.text, authorized: true, error: nil) })
        }
        let asked = await preauthorize(unique, requestor: requestor, profile: profile)
        if let gone = asked.loginGone {
            if (try? await deleteProfile(profile.mvpd, requestor)) != nil {
                announce(AccessEnablerStatus.error, errorCode: SDKErrorCode.userNotAuthenticated)
            }
            let error = PreauthorizeError(gone, httpStatus: 403)
            return PreauthorizeResponse(status: error, decisions: unique.map { .init(id: $0.text, authorized: false, error: error) })
        }
        permits.record(asked.decisions, for: key, askedAt: generation)
        let unanswered = PreauthorizeError(
            status: 0, code: "network_error", message: "No decision could be had for this resource", action: "retry")
        return PreauthorizeResponse(
            status: nil,
            decisions: unique.map { resource in
                guard let decision = asked.decisions[resource] else {
                    return .init(id: resource.text, authorized: false, error: asked.refusals[resource] ?? unanswered)
                }
                let authorized = decision.authorized == true
                return .init(
                    id: resource.text, authorized: authorized, error: decision.error.map { PreauthorizeError($0, httpStatus: 403) })
            })
    }

    /// An error whose action is `authentication` answered the preauthorization: the login is gone at the backend.
    /// It is forgotten here too, the host is told (setAuthenticationStatus(0)), nothing is preauthorized, and N130
    /// (N111 for a TempPass run out) says why.
    private func loggedOut(_ gone: EnhancedError, _ requestor: Requestor, _ profile: Profile) async -> PreauthorizedResources {
        do {
            try await deleteProfile(profile.mvpd, requestor)
        } catch {
            return preauthorized([], statuses: [storeFailure(error)])
        }
        announce(AccessEnablerStatus.error, errorCode: SDKErrorCode.userNotAuthenticated)
        return preauthorized([], statuses: [AdvancedStatus(Self.loggedOutStatus(gone), message: gone.message)])
    }

    /// The decisions of `resources` (distinct, in the caller's order), asked in as many calls as the backend
    /// takes: the whole list at once until a `too_many_resources` refusal, then chunks of at most
    /// ``usualPreauthorizeLimit`` (one fewer after each further refusal), a size kept for the requestor. Items
    /// whose decision says `action: retry` are asked again, alone, at most ``preauthorizeRetries`` times.
    /// `unanswered`: the resources left without a decision (their call failed, or they still say retry);
    /// `refusals`: for those whose last call was refused with an error object, or whose last decision still said
    /// retry, that error (as the host sees it);
    /// `loginGone`: an error, top-level or of an item, whose action is `authentication`.
    private func preauthorize(
        _ resources: [ResourceID], requestor: Requestor, profile: Profile
    ) async -> (
        decisions: [ResourceID: Decision], unanswered: [ResourceID], refusals: [ResourceID: PreauthorizeError], loginGone: EnhancedError?
    ) {
        let headers = await partnerHeaders(requestor, profile: profile) + machine.tempPassIdentity
        var decisions: [ResourceID: Decision] = [:]
        var refusals: [ResourceID: PreauthorizeError] = [:]
        var lastRefused = Set<ResourceID>()
        var gone: EnhancedError?
        await preauthorizeInChunks(
            resources, requestor: requestor, profile: profile, headers: headers, into: &decisions, refusals: &refusals,
            lastRefused: &lastRefused, loginGone: &gone)
        for _ in 0..<Self.preauthorizeRetries {
            let retry = resources.filter { decisions[$0]?.error?.action == .retry }
            guard !retry.isEmpty else { break }
            await uncancelledSleep(for: .milliseconds(300), on: executor)
            await preauthorizeInChunks(
                retry, requestor: requestor, profile: profile, headers: headers, into: &decisions, refusals: &refusals,
                lastRefused: &lastRefused, loginGone: &gone)
        }
        // Still saying retry: no decision, and why is what its last call said (preauthorize's error, P100's
        // details): the backend's retry error, or the refusal of that call's chunk.
        for resource in resources where decisions[resource]?.error?.action == .retry {
            if !lastRefused.contains(resource), let error = decisions[resource]?.error {
                refusals[resource] = PreauthorizeError(error, httpStatus: 403)
            }
            decisions[resource] = nil
        }
        let itemGone = decisions.values.lazy.compactMap(\.error).first { $0.endsLogin }
        // Unanswered: whatever has no decision after the last pass (a retry that a later pass answered has one).
        return (decisions, resources.filter { decisions[$0] == nil }, refusals, gone ?? itemGone)
    }

    /// One pass over `resources` in chunks; answered decisions go into `decisions` (replacing earlier ones). The
    /// error object of a chunk refused with one goes into `refusals` for each of its resources, and a refused
    /// resource into `lastRefused` until a later call answers it (an earlier retry decision is kept: the item is
    /// asked again); a top-level error whose action is `authentication` goes into `loginGone`. A list refused with
    /// `too_many_resources` even one resource at a time is not asked further.
    private func preauthorizeInChunks(
        _ resources: [ResourceID], requestor: Requestor, profile: Profile, headers: [(String, String)],
        into decisions: inout [ResourceID: Decision], refusals: inout [ResourceID: PreauthorizeError],
        lastRefused: inout Set<ResourceID>, loginGone: inout EnhancedError?
    ) async {
        var index = 0
        while index < resources.count {
            let size = max(1, preauthorizeChunkSize[requestor.id] ?? resources.count)
            let chunk = Array(resources[index..<min(index + size, resources.count)])
            let answer = await call(
                RESTV2.preauthorize(requestor.id, mvpd: profile.mvpd, resources: chunk.map(\.text), headers: headers),
                with: requestor.client(for: profile.mvpd))
            let tooMany = answer.error?.known == .tooManyResources
            if tooMany, chunk.count > 1 {
                preauthorizeChunkSize[requestor.id] = min(Self.usualPreauthorizeLimit, chunk.count - 1)
                continue
            }
            // A refusal of one resource that says "too many" holds for every other: asking them would only fan out.
            let failed = tooMany ? Array(resources[index...]) : chunk
            index += failed.count
            if let error = answer.error, error.endsLogin { loginGone = error }
            // Each resource keeps what its last call said: a refusal (its error object, or none), else the answer.
            guard let answered = answer.value else {
                for resource in failed {
                    lastRefused.insert(resource)
                    if case .httpError(let status, _) = answer.result, let error = answer.error {
                        refusals[resource] = PreauthorizeError(error, httpStatus: status)
                    } else {
                        refusals[resource] = nil
                    }
                }
                continue
            }
            for resource in chunk {
                lastRefused.remove(resource)
                refusals[resource] = nil
            }
            decisions.merge(answered.decisions(for: Set(chunk))) { _, new in new }
        }
    }
}

/// The permits preauthorization found, per profile, in the instance's memory only (never persisted: Adobe's rule).
/// They are dropped when the profile's login changes (a login or logout here or elsewhere: the profile may be another
/// user's now, at the same MVPD) and when its login is no longer watched; a preauthorization that was asked while
/// such a drop happened does not cache what it got, which may be the user's before.
struct PermitCache {
    private var byProfile: [ProfileKey: Set<ResourceID>] = [:]
    /// Moves at every drop.
    private(set) var generation = 0

    subscript(key: ProfileKey) -> Set<ResourceID> { byProfile[key] ?? [] }

    /// Drops the permits of the profiles `drops` picks.
    mutating func drop(where drops: (ProfileKey) -> Bool) {
        generation += 1
        byProfile = byProfile.filter { !drops($0.key) }
    }

    /// Takes `decisions`, asked for `key` when the cache was at `generation`: a permit is added, anything else
    /// removes the resource; nothing when a drop came meanwhile.
    mutating func record(_ decisions: [ResourceID: Decision], for key: ProfileKey, askedAt generation: Int) {
        guard generation == self.generation else { return }
        var permitted = self[key]
        for (resource, decision) in decisions {
            if decision.authorized == true { permitted.insert(resource) } else { permitted.remove(resource) }
        }
        byProfile[key] = permitted
    }
}

extension Engine {
    /// `resources` without repeats, in their order: the first of each byte-exact id.
    static func distinct(_ resources: [String]) -> [ResourceID] {
        var seen = Set<ResourceID>()
        return resources.map(ResourceID.init).filter { seen.insert($0).inserted }
    }
}

extension PreauthorizeError {
    /// REST API V2's error object as the backend sent it; `httpStatus` when it has no `status` of its own.
    init(_ error: EnhancedError, httpStatus: Int) {
        self.init(
            status: error.status ?? httpStatus, code: error.code, message: error.message,
            details: error.details.isEmpty ? nil : error.details,
            action: error.action.rawValue)
    }
}
