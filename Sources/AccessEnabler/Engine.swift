import Foundation
import JSON
import Synchronization

/// The state machine behind `AccessEnabler` (adobe-pass-sdk-notes §2; DESIGN §4). All flow state is isolated
/// to this actor; delegate callbacks are made synchronously from it, so an outcome's callbacks always precede
/// the return of the call it ends.
actor Engine {
    nonisolated let configuration: AccessEnablerConfiguration
    nonisolated let store: TokenStore
    nonisolated let delegate: EntitlementDelegate
    /// What the never-queued calls read synchronously.
    nonisolated let shared = SharedBox()
    nonisolated let clock: SkewedClock
    nonisolated let transport = HTTPTransport.shared
    nonisolated let deviceID: String

    enum Phase {
        case idle
        case pending
        case ready(Requestor)
        case failed
    }
    var phase: Phase = .idle
    /// Calls waiting for the setRequestor in flight, in arrival order.
    var queued: [CheckedContinuation<Void, Never>] = []
    var clients: [String: RestClient] = [:]

    var loginFlow: LoginFlow?
    var logoutFlow: LogoutFlow?
    var pollTask: Task<Void, Never>?
    var logoutTimer: Task<Void, Never>?
    var flowCounter = 0
    /// The outcome of the last flow handleExternalURL (or its timeout/cancel) ended; answers a repeated call.
    var lastCompleted: AuthenticationStatus?

    init(configuration: AccessEnablerConfiguration, store: TokenStore, delegate: EntitlementDelegate) {
        self.configuration = configuration
        self.store = store
        self.delegate = delegate
        clock = SkewedClock(local: configuration.clock)
        deviceID = configuration.deviceID ?? store.setIfAbsent(.device, "id", UUID().uuidString.lowercased())
    }

    // MARK: setRequestor and the queue

    func setRequestor(_ requestorID: String, serviceProviders: [URL]?) async -> Int32 {
        shared.withLock { $0.requestorWasSet = true }
        phase = .pending
        guard let statement = configuration.softwareStatement else {
            return finishSetRequestor(nil, failureStatus: AdvancedStatus(id: "R400", level: "error", message: "No software statement"))
        }
        let urls = (serviceProviders ?? [configuration.backendURL]).filter(Self.isAllowedBackend)
        let providers = urls.map { client(for: $0, statement: statement) }
        let path = "/api/v2/\(FormEncoding.escape(requestorID))/configuration"
        var requestor: Requestor?
        var firstFailure: APIResult?
        await withTaskGroup(of: (RestClient, APIResult).self) { group in
            for provider in providers {
                group.addTask { (provider, await provider.call("GET", path)) }
            }
            for await (provider, result) in group {
                if case .ok(let body) = result, body["requestor"]?.objectValue != nil {
                    if requestor == nil { requestor = Requestor(id: requestorID, primary: provider) }
                    requestor?.merge(configuration: body, from: provider)
                } else if firstFailure == nil {
                    firstFailure = result
                }
            }
        }
        if providers.isEmpty {
            return finishSetRequestor(nil, failureStatus: AdvancedStatus(id: "CFG404", level: "error", message: "No usable service provider"))
        }
        if let requestor { await synchronizeProfiles(requestor) }
        return finishSetRequestor(requestor, failureStatus: Self.configurationFailureStatus(firstFailure))
    }

    /// Brings each stored profile in line with the backend (`GET profiles/{mvpd}`): a profile the backend no
    /// longer has (logout elsewhere, expiry, lost credentials) is dropped, a present one refreshed (new metadata).
    /// Answers that say nothing certain (errors, TempPass over) leave the stored profile alone.
    private func synchronizeProfiles(_ requestor: Requestor) async {
        for profile in storedProfiles(requestor) {
            let result = await requestor.client(for: profile.mvpd).call(
                "GET", "/api/v2/\(FormEncoding.escape(requestor.id))/profiles/\(FormEncoding.escape(profile.mvpd))")
            guard case .ok(let body) = result, body["profiles"]?.objectValue != nil else { continue }
            if let fresh = Profile.first(in: body, preferring: profile.mvpd), fresh.mvpd == profile.mvpd {
                saveProfile(fresh, requestor)
            } else if !profile.isTemporary {
                store.set(.profile, profileKey(requestor, profile.mvpd), nil)
            }
        }
    }

    private func finishSetRequestor(_ requestor: Requestor?, failureStatus: AdvancedStatus) -> Int32 {
        let status: Int32
        if let requestor {
            phase = .ready(requestor)
            let selected = store.value(.selected, selectionKey(requestor)).flatMap { requestor.mvpd($0) }
            shared.withLock { $0.selectedMVPD = selected }
            status = AccessEnablerStatus.success
            delegate.setRequestorComplete(status)
        } else {
            phase = .failed
            status = AccessEnablerStatus.error
            delegate.setRequestorComplete(status)
            delegate.status(failureStatus)
        }
        let waiting = queued
        queued = []
        for continuation in waiting { continuation.resume() }
        return status
    }

    /// The status reported with setRequestorComplete(0) (adobe-pass-sdk-notes §3.2).
    static func configurationFailureStatus(_ result: APIResult?) -> AdvancedStatus {
        switch result {
        case .registration(.invalidSoftwareStatement):
            return AdvancedStatus(id: "R400", level: "error", message: "The software statement was refused")
        case .registration(.accessTokenUnavailable):
            return AdvancedStatus(id: "R401", level: "error", message: "No access token could be obtained")
        case .httpError(401, _):
            return AdvancedStatus(id: "R401", level: "error", message: "The access token was refused")
        case .httpError(let status, let error) where status >= 500:
            return AdvancedStatus(id: "CFG\(status)", level: "error", message: error?["message"]?.stringValue)
        case .httpError(_, let error):
            return AdvancedStatus(id: "CFG400", level: "error", message: error?["message"]?.stringValue ?? "Invalid requestor")
        case .throttled:
            return AdvancedStatus(id: "CFG429", level: "error", message: "Too many requests")
        case .garbage:
            return AdvancedStatus(id: "CFG500", level: "error", message: "Unreadable configuration")
        case .transport, .ok, .none:
            return AdvancedStatus(id: "CFG404", level: "error", message: "Backend not reachable")
        }
    }

    /// https, or plain http on loopback only (DESIGN §6).
    static func isAllowedBackend(_ url: URL) -> Bool {
        switch url.scheme?.lowercased() {
        case "https": return true
        case "http": return ["127.0.0.1", "localhost", "::1", "[::1]"].contains(url.host?.lowercased() ?? "")
        default: return false
        }
    }

    /// The requestor once setRequestor has completed; waits (queued, in order) while it is in flight.
    /// nil when setRequestor failed or was never called.
    func ready() async -> Requestor? {
        while case .pending = phase {
            await withCheckedContinuation { queued.append($0) }
        }
        if case .ready(let requestor) = phase { return requestor }
        return nil
    }

    func client(for url: URL, statement: String) -> RestClient {
        let key = url.absoluteString
        if let existing = clients[key] { return existing }
        let shared = self.shared
        let deviceID = self.deviceID
        let computedInfo = DeviceInfo.computed(secondScreen: !configuration.webView)
        let delegate = self.delegate
        let client = RestClient(
            baseURL: url, softwareStatement: statement, redirectURL: configuration.redirectURL, store: store, clock: clock,
            transport: transport, timeout: configuration.requestTimeout, maxThrottleRetries: configuration.maxThrottleRetries,
            headers: {
                let options = shared.withLock { $0.options }
                return DeviceHeaders(deviceID: deviceID, deviceInfo: options.deviceInfo ?? computedInfo, visitorID: options.visitorID)
            },
            onSkewWarning: {
                delegate.status(AdvancedStatus(id: "CFG100", level: "warning", message: "The device clock differs from the backend's by more than 5 minutes"))
            }, log: configuration.log)
        clients[key] = client
        return client
    }

    // MARK: stored state keys

    nonisolated func selectionKey(_ requestor: Requestor) -> String {
        RestClient.scope(baseURL: configuration.backendURL, softwareStatement: configuration.softwareStatement ?? "") + "|" + requestor.id
    }

    nonisolated func profileKey(_ requestor: Requestor, _ mvpd: String) -> String {
        requestor.client(for: mvpd).scope + "|" + requestor.id + "|" + mvpd
    }

    /// Profiles stored for the requestor's MVPDs, expired ones included.
    func storedProfiles(_ requestor: Requestor) -> [Profile] {
        requestor.mvpds.compactMap { mvpd in
            store.value(.profile, profileKey(requestor, mvpd.ID)).flatMap { try? JSON.parse($0) }.map { Profile(mvpd: mvpd.ID, json: $0) }
        }
    }

    /// The profile the user is authenticated with: the selected MVPD's when valid, else the longest valid one.
    func currentProfile(_ requestor: Requestor) -> Profile? {
        let now = clock.nowMillis()
        let valid = storedProfiles(requestor).filter { $0.notAfter > now }
        let selected = shared.withLock { $0.selectedMVPD?.ID }
        return valid.first { $0.mvpd == selected } ?? valid.max { $0.notAfter < $1.notAfter }
    }

    func saveProfile(_ profile: Profile, _ requestor: Requestor) {
        store.set(.profile, profileKey(requestor, profile.mvpd), profile.json.serializedString())
    }

    func select(_ mvpd: MVPD?, _ requestor: Requestor) {
        shared.withLock { $0.selectedMVPD = mvpd }
        store.set(.selected, selectionKey(requestor), mvpd?.ID)
    }

    // MARK: checkAuthentication (adobe-pass-sdk-notes §2.4)

    func checkAuthentication() async -> AuthenticationStatus {
        guard let requestor = await ready() else {
            return report(.failed(ErrorCode.genericAuthentication), requestor: nil, profile: nil, cached: false)
        }
        if let profile = currentProfile(requestor) {
            select(requestor.mvpd(profile.mvpd), requestor)
            return report(.authenticated, requestor: requestor, profile: profile, cached: true)
        }
        let now = clock.nowMillis()
        let expiredTempPass = storedProfiles(requestor).first { $0.isTemporary && $0.notAfter <= now }
        if let expiredTempPass {
            store.set(.profile, profileKey(requestor, expiredTempPass.mvpd), nil)
            return report(
                .failed(ErrorCode.userNotAuthenticated), requestor: requestor, profile: nil, cached: false,
                status: AdvancedStatus(id: "N111", level: "warning", message: "TempPass expired"))
        }
        return report(
            .failed(ErrorCode.userNotAuthenticated), requestor: requestor, profile: nil, cached: false,
            status: AdvancedStatus(id: "N000", level: "info", message: "The user is not authenticated"))
    }

    /// Delivers setAuthenticationStatus, then the authentication tracking event, then `status` if any.
    @discardableResult
    func report(
        _ outcome: AuthenticationStatus, requestor: Requestor?, profile: Profile?, cached: Bool, status: AdvancedStatus? = nil
    ) -> AuthenticationStatus {
        delegate.setAuthenticationStatus(outcome.status, errorCode: outcome.errorCode)
        if let requestor {
            let success = outcome.status == AccessEnablerStatus.success
            let head: [String?] =
                success ? ["true", profile?.mvpd, profile?.trackingGUID, cached ? "true" : "false"] : ["false", nil, nil, nil]
            delegate.sendTrackingData(head + requestor.trackingTail, forEventType: TrackingEvent.authentication)
        }
        if let status { delegate.status(status) }
        return outcome
    }
}
