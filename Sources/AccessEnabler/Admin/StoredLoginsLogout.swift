import struct FoundationEssentials.Date

/// One stored login (one MVPD of one requestor on one device) that `passbridge state logout` tried to end.
public struct StoredLogoutOutcome: Sendable {
    public var login: StoredLogin
    /// nil: the backend answered the logout with 2xx, or refused it with an error whose action is `authentication`
    /// (either way it no longer has the login), and the store no longer holds it;
    /// else why it could not be ended, one line (the login stays in the store).
    public var failure: String?
    /// Why the store still holds a login the backend ended (its deletion failed: another process's lock, the
    /// database away), one line; nil when it was deleted or not ended.
    public var stillStored: String?
}

extension TokenStore {
    /// Ends at `backend` every login stored for it that `selection` takes: one REST API V2 logout per
    /// MVPD (Adobe Pass REST API V2, "Initiate logout for specific MVPD") with the login's device identifier and the
    /// client credentials stored for its registration — never registering anew, never opening the MVPD's logout
    /// page — then deletes from the store each login the backend ended or no longer had, and the requestor's selected MVPD on a device
    /// once none of its logins there is left. A login whose logout failed stays stored; so does one whose deletion
    /// failed (`stillStored`), and the others are still tried.
    /// - Parameters:
    ///   - backend: the base URL (https, or http on loopback), as the daemon's `--backend`.
    ///   - redirectURL: the `redirectUrl` the logouts carry (the daemon's `--redirect-url`).
    ///   - timeout: the deadline of each HTTP request, connecting included.
    /// - Returns: one outcome per login of `backend`, in the store's order; logins of other backends are left alone.
    /// - Throws: `TokenStoreError` when the store cannot be read.
    public func logOut(
        atBackend backend: BackendURL, _ selection: LoginSelection, redirectURL: String, timeout: Duration,
        log: EngineLog? = nil
    ) async throws -> [StoredLogoutOutcome] {
        let base = backend.base
        let stored = try await executor.run { try $0.allProfiles() }.filter { key, _ in
            key.login.scope.backend == base && selection.contains(key.login)
        }
        var clients: [LoginKey: RestClient] = [:]
        var outcomes: [StoredLogoutOutcome] = []
        var kept: Set<LoginKey> = []
        for (key, profile) in stored {
            let client = clients[key.login] ?? Self.logoutClient(backend, key.login, redirectURL, timeout, store: self, log: log)
            clients[key.login] = client
            let answer = await client.call(RESTV2.logout(key.login.requestor, mvpd: key.mvpd, redirectURL: redirectURL))
            var outcome = StoredLogoutOutcome(login: StoredLogin(key, profile))
            // A refusal whose action is `authentication` (authenticated_profile_missing, …) says the login is already
            // gone there: ended as well.
            var ended = answer.error?.action == .authentication
            if case .ok = answer.result { ended = true }
            if ended {
                do {
                    try await deleteProfile(key)
                } catch {
                    outcome.stillStored = "\(error)"
                    kept.insert(key.login)
                }
            } else {
                outcome.failure = Self.describe(answer.result, backend: base)
                kept.insert(key.login)
            }
            outcomes.append(outcome)
        }
        let ended = Dictionary(uniqueKeysWithValues: clients.keys.filter { !kept.contains($0) }.map { ($0, String?.none) })
        // The selection is a cache: one the store keeps is replaced by the next login's.
        if !ended.isEmpty { _ = try? await executor.run { _ = try $0.writeCache(expiries: [:], selections: ended) } }
        return outcomes
    }

    /// A REST client for `login`'s registration and device: the stored client credentials only (no statement).
    private static func logoutClient(
        _ backend: BackendURL, _ login: LoginKey, _ redirectURL: String, _ timeout: Duration, store: TokenStore,
        log: EngineLog?
    ) -> RestClient {
        let deviceIdentifier = DeviceInfo.deviceIdentifierHeader(login.device)
        let info = DeviceInfo.computed(secondScreen: false)
        return RestClient(
            baseURL: backend, softwareStatement: nil, redirectURL: redirectURL, store: store, clock: SkewedClock(local: { Date() }),
            transport: HTTPTransport.shared, timeout: timeout, maxThrottleRetries: 3,
            headers: { DeviceHeaders(deviceIdentifier: deviceIdentifier, deviceInfo: info) }, log: log, scope: login.scope)
    }

    /// Why a logout did not end the login, for the operator.
    private static func describe(_ result: APIResult, backend: String) -> String {
        switch result {
        case .ok: return "ended"
        case .transport(.timeout): return "no answer from \(backend) in time"
        case .transport(.network): return "\(backend) could not be reached"
        case .transport(.insecure): return "\(backend)'s TLS certificate did not verify"
        case .transport(.unavailable(let reason)): return "no HTTP: libcurl could not be loaded (\(reason))"
        case .throttled: return "\(backend) kept answering 429 (throttled)"
        case .registration:
            return "no access token: \(backend) refused the client credentials stored for this registration, or none are stored"
        case .store(let error): return "the store failed: \(error)"
        case .garbage: return "\(backend) answered with a body that is not JSON"
        case .httpError(let status, let error):
            let code = EnhancedError(error).map { $0.code.isEmpty ? "" : " \($0.code)" } ?? ""
            return "\(backend) answered HTTP \(status)\(code)"
        }
    }
}
