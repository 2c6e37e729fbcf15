import JSON
import Synchronization
import ThreadAffinity

/// The engine, what implements `AccessEnabler`. Its flow state is one value, `machine` (the states and every
/// state × event cell: `README.md` next to this file); the actor performs the machine's actions (HTTP, store,
/// delegate callbacks, timers). Delegate callbacks are made synchronously from the actor, so an outcome's
/// callbacks always precede the return of the call it ends.
public actor Engine {
    /// The executor every job of this actor runs on (the configuration's, else `ThreadExecutor.shared`).
    nonisolated let executor: any TimerExecutor
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    nonisolated let configuration: AccessEnablerConfiguration
    nonisolated let store: TokenStore
    nonisolated let delegate: EntitlementDelegate
    /// What the never-queued calls read synchronously.
    nonisolated let shared = SharedBox()
    nonisolated let clock: SkewedClock
    nonisolated let transport: any HTTPClient
    /// The device identifier: the configuration's, else the store's (read at the first setRequestor or
    /// getMetadata, never invented: an id that could not be stored is never used).
    var deviceID: String?
    /// Preauthorization permits, in memory only (never persisted, Adobe's rule), per profile.
    var permits = PermitCache()
    /// Each profile `storedProfiles` returned, with the stored text it was parsed from, so that the same text is
    /// not parsed again: a logged-in call reads the same text from the live-login memory every time, and parsing
    /// it was about 4% of the instructions of a getAuthorization. Only the keys of the last read are kept.
    var parsedProfiles: [ProfileKey: (text: String, profile: Profile)] = [:]
    /// Per requestor id, the most resources one preauthorize call was found to take (learned from a
    /// `too_many_resources` refusal; absent: not known, the whole list goes in one call).
    var preauthorizeChunkSize: [String: Int] = [:]

    typealias Machine = EngineMachine<Requestor, CheckedContinuation<Void, Never>, CheckedContinuation<AuthenticationStatus, Never>>
    /// Every piece of flow and lifecycle state: the configuration, the calls waiting for it and for their turn,
    /// the login or logout in progress, closed.
    var machine = Machine()
    var clients: [String: RestClient] = [:]

    /// The watch of the requestor's logins in the store (`EngineLiveLogin.swift`).
    var loginWatch: LoginWatch?

    public init(configuration: AccessEnablerConfiguration, store: TokenStore, delegate: EntitlementDelegate) {
        self.configuration = configuration
        executor = configuration.executor ?? ThreadExecutor.shared
        self.store = store
        self.delegate = delegate
        clock = SkewedClock(local: configuration.clock)
        transport = configuration.httpClient
        deviceID = configuration.deviceID
        Self.live.add(1, ordering: .relaxed)
    }

    deinit {
        Self.live.subtract(1, ordering: .relaxed)
    }

    /// Debug builds: stops the process unless the engine runs on its executor's thread (in the daemon, the event
    /// loop of its connection), which every machine action and every held call checks.
    @inline(__always) nonisolated func checkThread() {
        #if DEBUG
            executor.checkIsolated()
        #endif
    }

    /// Engines alive in this process.
    static let live = Atomic<Int>(0)

    /// The requestor in force: the ready one, or during a setRequestor the one before it.
    var inForce: Requestor? { machine.inForce }

    /// Whether `mvpd`'s pages go to the host with `useSVC: true` (`Options.useSVC`).
    nonisolated func useSVC(for mvpd: MVPD?) -> Bool {
        shared.withLock { $0.options.useSVC(for: mvpd, listed: configuration.svcMVPDs) }
    }

    /// The redirect URL of `mvpd`'s session and logout: init's `svcRedirectUrl` for a page the Safari View Controller
    /// opens, else the instance's.
    nonisolated func redirectURL(for mvpd: MVPD?) -> String {
        useSVC(for: mvpd) ? configuration.svcRedirectURL ?? configuration.redirectURL : configuration.redirectURL
    }

    /// Whether a second screen is being polled (its login waits at the second screen).
    var isPolling: Bool { machine.login.map { machine.isPolling($0.id) } ?? false }

    /// The device identifier, read (or created) in the store the first time.
    func resolveDeviceID() async throws -> String {
        if let deviceID { return deviceID }
        let stored = try await store.deviceIdentity()
        deviceID = stored
        return stored
    }

    /// A store failure (the store logs it: `StoreFailureLog`), reported to the host as status STORE500 after the
    /// call's failure callback.
    func storeFailure(_ error: any Error) -> AdvancedStatus {
        AdvancedStatus(.store500, message: "The device's store failed: \(error)")
    }

    // MARK: setRequestor and the queue

    /// `answered` gets the outcome after the callbacks, before any call held behind this setRequestor goes on.
    public func setRequestor(
        _ requestorID: String, serviceProviders: [BackendURL]?, answered: @Sendable (RequestorStatus) -> Void
    ) async -> RequestorStatus {
        checkThread()
        let number = machine.setRequestorStarted()
        let (outcome, requestor) = await configure(requestorID, serviceProviders: serviceProviders)
        answered(outcome)
        machine.setRequestorEnded(number, requestor, reasons: outcome.statuses)?.resume()
        checkPendingLoginChange()
        return outcome
    }

    /// setRequestor's work, up to its callbacks: the outcome and the requestor configured (nil when it failed).
    private func configure(_ requestorID: String, serviceProviders: [BackendURL]?) async -> (RequestorStatus, Requestor?) {
        guard let statement = configuration.softwareStatement else {
            let r400 = AdvancedStatus(.r400, message: "No software statement", details: configuration.missingStatementHelp)
            return finishSetRequestor(nil, failureStatus: r400)
        }
        do {
            _ = try await resolveDeviceID()
        } catch {
            return finishSetRequestor(nil, failureStatus: storeFailure(error))
        }
        // A backend listed twice is asked once: asking it again would tell nothing more, and wait as long.
        var listed = Set<BackendURL>()
        let providers = (serviceProviders ?? [configuration.backendURL]).filter { listed.insert($0).inserted }.map {
            client(for: $0, statement: statement)
        }
        let endpoint = RESTV2.configuration(requestorID, profile: shared.withLock { $0.options.applicationProfile })
        var requestor: Requestor?
        var firstFailure: (result: APIResult, backend: BackendURL)?
        var skew: [AdvancedStatus] = []
        // Asked at once; merged in the order listed, whichever answers first, so that an MVPD two of them list is
        // paired with the same one at every start, and the login stored under it is found (Protocol/README.md,
        // "Transports and framing", Limits).
        var answers = [EndpointAnswer<ConfigurationAnswer>?](repeating: nil, count: providers.count)
        await withTaskGroup(of: (Int, EndpointAnswer<ConfigurationAnswer>).self) { group in
            for (position, provider) in providers.enumerated() {
                group.addTask(executorPreference: executor) { [executor] in
                    executor.checkOwnThread()
                    return (position, await provider.call(endpoint))
                }
            }
            for await (position, answer) in group {
                if answer.clockSkewed {
                    delegate.status(Self.cfg100)
                    skew = [Self.cfg100]
                }
                answers[position] = answer
            }
        }
        for (provider, answer) in zip(providers, answers) {
            guard let answer else { continue }
            if let configuration = answer.value {
                if requestor == nil { requestor = Requestor(id: requestorID, primary: provider) }
                requestor?.merge(configuration: configuration, from: provider)
            } else if firstFailure == nil {
                firstFailure = (answer.result, provider.baseURL)
            }
        }
        if providers.isEmpty {
            return finishSetRequestor(
                nil, failureStatus: AdvancedStatus(.cfg404, message: "No usable service provider"))
        }
        let failureStatus = Self.configurationFailureStatus(firstFailure?.result, requestorID: requestorID, backend: firstFailure?.backend)
        var partnerStatus: AdvancedStatus?
        var selected: MVPD?
        if let requestor {
            watchLogins(requestor)
            do {
                if machine.storageCheckDue {
                    try await checkStorage(requestor)
                    machine.storageCheckRan()
                }
                partnerStatus = try await partnerSetRequestor(requestor)
                selected = try await store.selectedProvider(selectionKey(requestor)).flatMap { requestor.mvpd($0) }
                try await settle(requestor)
            } catch {
                return finishSetRequestor(nil, failureStatus: storeFailure(error))
            }
        }
        return finishSetRequestor(requestor, selected: selected, failureStatus: failureStatus, partnerStatus: partnerStatus, raised: skew)
    }

    /// `partnerStatus`: VSA403, VSA404 or APPL_ERROR of the partner check, reported after setRequestorComplete(1).
    /// `raised`: statuses sent during the configuration (CFG100), reasons of a failure with `failureStatus`.
    private func finishSetRequestor(
        _ requestor: Requestor?, selected: MVPD? = nil, failureStatus: AdvancedStatus, partnerStatus: AdvancedStatus? = nil,
        raised: [AdvancedStatus] = []
    ) -> (RequestorStatus, Requestor?) {
        if requestor != nil {
            shared.withLock { $0.selectedMVPD = selected }
            delegate.setRequestorComplete(AccessEnablerStatus.success)
            if let partnerStatus { delegate.status(partnerStatus) }
            return (RequestorStatus(status: AccessEnablerStatus.success), requestor)
        }
        delegate.setRequestorComplete(AccessEnablerStatus.error)
        delegate.status(failureStatus)
        return (RequestorStatus(status: AccessEnablerStatus.error, statuses: (raised + [failureStatus]).filter(\.isReason)), nil)
    }

    /// The status reported with setRequestorComplete(0) (Adobe's "Error Reporting": advanced status codes).
    /// An unknown requestor (`invalid_parameter_service_provider`) is named as such, the backend's text in `details`.
    /// CFG400 for a requestor id the backend does not know: the backend's message and `details` in `details`; when
    /// those details list the known ids (`Known service providers: A, B`, as the emulator writes them:
    /// Sources/PassEmulator/README.md), the message names the one near the id given (`Text.near`), if any.
    static func unknownRequestorStatus(_ error: EnhancedError?, requestorID: String) -> AdvancedStatus {
        var message = "The backend does not know the requestor id '\(Text.excerpt(requestorID))' (ids are case-sensitive)"
        let backendDetails = error?.details ?? ""
        let prefix = "Known service providers: "
        if backendDetails.hasPrefix(prefix) {
            let known = backendDetails.dropFirst(prefix.count).split(separator: ",").map { String($0).trimmingWhitespace() }
            if let near = Text.near(requestorID, in: known.filter { !$0.isEmpty }) { message += "; did you mean '\(near)'?" }
        }
        let details = [error?.message, backendDetails.isEmpty ? nil : backendDetails].compactMap { $0 }.joined(separator: " ")
        return AdvancedStatus(.cfg400, message: message, details: details.isEmpty ? nil : details)
    }

    /// `backend`: the one that answered `result`, named in CFG404's details.
    static func configurationFailureStatus(_ result: APIResult?, requestorID: String = "", backend: BackendURL? = nil) -> AdvancedStatus {
        switch result {
        case .registration(.invalidSoftwareStatement):
            return AdvancedStatus(
                .r400, message: "The software statement was refused",
                details: "the backend's client registration (DCR) answered invalid_software_statement: give the statement "
                    + "Adobe issued for this application, whole and unchanged")
        case .registration(.accessTokenUnavailable):
            return AdvancedStatus(.r401, message: "No access token could be obtained")
        case .httpError(401, _):
            return AdvancedStatus(.r401, message: "The access token was refused")
        case .httpError(let status, let error) where status >= 500:
            return AdvancedStatus(.cfg5xx(status), message: EnhancedError(error)?.message)
        case .httpError(_, let error) where EnhancedError(error)?.known == .invalidParameterServiceProvider:
            return unknownRequestorStatus(EnhancedError(error), requestorID: requestorID)
        case .httpError(_, let error):
            return AdvancedStatus(.cfg400, message: EnhancedError(error)?.message ?? "Invalid requestor")
        case .throttled:
            return AdvancedStatus(.cfg429)
        case .garbage:
            return AdvancedStatus(.cfg5xx(500), message: "Unreadable configuration")
        case .store(let error):
            return AdvancedStatus(.store500, message: "The device's store failed: \(error)")
        case .transport(.insecure):
            return AdvancedStatus(.sec420)
        case .transport:
            return AdvancedStatus(.cfg404, details: backend.map { "\($0.base) could not be reached" })
        case .ok, .none:
            return AdvancedStatus(.cfg404)
        }
    }

    /// `call`'s turn (one of the `WaitingCall` list): the machine queues the call as it enters and gives it its
    /// turn once every such call that entered before it has ended its own and no setRequestor is in flight. So
    /// these calls run one at a time per instance, in the order they entered, and their callbacks come in that
    /// order (Protocol/README.md, Lifecycle 3), whatever order the runtime would resume them in. A call ends its
    /// turn when it returns (`endTurn`, deferred at the call) or once it waits on the host: a login the machine
    /// has taken (`login(_:filter:turn:)`), a logout page. `requestor` is nil when setRequestor failed or was never
    /// called, and after `cancel`. `call` is nil for the one call that waits only at times: setSelectedProvider
    /// with no login in progress while a setRequestor is in flight.
    func ready(_ call: WaitingCall?) async -> Turn {
        checkThread()
        await withCheckedContinuation { machine.callEntered($0)?.resume() }
        return Turn(requestor: machine.readyRequestor)
    }

    /// Ends `turn` (once; later calls do nothing) and gives the next queued call its turn.
    ///
    /// A call that returns (the default) hands the turn on from a timer due at once, which the executor runs after
    /// the jobs already queued: among them the caller's code after this call returns, so that a host has this
    /// call's response before the next call's callbacks (Protocol/README.md, Lifecycle 3). A call that now waits
    /// on the host (`waitsOnHost`: a login the machine took, a logout page) hands it on at once, so that a call
    /// queued behind a login joins that login before the host can end it.
    func endTurn(_ turn: Turn, waitsOnHost: Bool = false) {
        guard !turn.ended else { return }
        turn.ended = true
        if waitsOnHost {
            machine.turnEnded()?.resume()
        } else {
            after(.zero) { engine in
                engine.machine.turnEnded()?.resume()
                engine.checkPendingLoginChange()
            }
        }
    }

    /// Runs `body` on the engine once `delay` has passed, as a timer of the engine's executor (the event loop,
    /// `ThreadExecutor`), so that no other thread takes part; the handle stops it.
    @discardableResult
    nonisolated func after(_ delay: Duration, _ body: @escaping @Sendable (isolated Engine) -> Void) -> Scheduled {
        executor.run(after: delay) { [weak self] in self?.assumeIsolated { body($0) } }
    }

    /// Sends `endpoint` with `client`. When the answer put the device clock more than 5 minutes off the backend's,
    /// status CFG100 goes out, filed under login `flow` when the call is made for one (its outcome's reason).
    func call<Response>(_ endpoint: Endpoint<Response>, with client: RestClient, flow: Int? = nil) async -> EndpointAnswer<Response> {
        let answer = await client.call(endpoint)
        if answer.clockSkewed { raise(Self.cfg100, flow: flow) }
        return answer
    }

    /// Sends `status`; with `flow`, files it under that login too, so that the login's outcome carries it.
    func raise(_ status: AdvancedStatus, flow: Int?) {
        delegate.status(status)
        if let flow { machine.raised(flow: flow, status) }
    }

    static var cfg100: AdvancedStatus {
        AdvancedStatus(.cfg100)
    }

    func client(for url: BackendURL, statement: String) -> RestClient {
        let key = url.text
        if let existing = clients[key] { return existing }
        let shared = self.shared
        let deviceIdentifier = DeviceInfo.deviceIdentifierHeader(self.deviceID ?? "")
        let computedInfo = DeviceInfo.computed(secondScreen: !configuration.webView)
        let hostInfo = configuration.deviceInfo
        let forwardedFor = configuration.forwardedFor
        let singleSignOn = configuration.singleSignOn.headers
        let client = RestClient(
            executor: executor, baseURL: url, softwareStatement: statement, redirectURL: configuration.redirectURL, store: store,
            clock: clock,
            transport: transport, timeout: configuration.requestTimeout, maxThrottleRetries: configuration.maxThrottleRetries,
            headers: {
                let options = shared.withLock { $0.options }
                return DeviceHeaders(
                    deviceIdentifier: deviceIdentifier, deviceInfo: hostInfo ?? options.deviceInfo ?? computedInfo,
                    visitorID: options.visitorID,
                    forwardedFor: forwardedFor, singleSignOn: singleSignOn)
            }, log: configuration.log)
        clients[key] = client
        return client
    }

    // MARK: stored state keys

    /// The selected MVPD is kept per (backend, software statement, device, requestor).
    func selectionKey(_ requestor: Requestor) -> LoginKey {
        let scope = RestClient.scope(baseURL: configuration.backendURL, softwareStatement: configuration.softwareStatement ?? "")
        return LoginKey(scope: scope, device: deviceID ?? "", requestor: requestor.id)
    }

    /// A profile is kept per (the MVPD's backend, software statement, device, requestor, MVPD).
    func profileKey(_ requestor: Requestor, _ mvpd: String) -> ProfileKey {
        ProfileKey(login: LoginKey(scope: requestor.client(for: mvpd).scope, device: deviceID ?? "", requestor: requestor.id), mvpd: mvpd)
    }

    /// The logins the requestor's profiles on this device are stored under (one per scope).
    func logins(_ requestor: Requestor) -> Set<LoginKey> { requestor.logins(device: deviceID ?? "") }

    /// Profiles stored for the requestor's MVPDs, expired ones included.
    /// `fresh`: read in the store even when the daemon's memory has them (`TokenStore.profiles`), for the calls
    /// that state the login (checkAuthentication, getAuthentication, logout, setRequestor's re-sync); the others
    /// (authorizations, metadata) take memory, which the live-login feed keeps true.
    func storedProfiles(_ requestor: Requestor, fresh: Bool = false) async throws -> [Profile] {
        let stored = requestor.own(try await store.profiles(of: logins(requestor), fresh: fresh))
        let profiles = stored.compactMap { key, stored -> Profile? in
            if let known = parsedProfiles[key], known.text == stored.json { return known.profile }
            guard let json = try? JSON.parse(stored.json) else { return nil }
            let profile = Profile(mvpd: key.mvpd, json: json)
            parsedProfiles[key] = (stored.json, profile)
            return profile
        }
        if parsedProfiles.count > stored.count {
            let current = Set(stored.map(\.0))
            parsedProfiles = parsedProfiles.filter { current.contains($0.key) }
        }
        return profiles
    }

    /// The profile the user is authenticated with: the selected MVPD's when valid, else the longest valid one.
    /// Without `fresh`, a login found in memory is trusted (the backend judges it at the decision), and a missing
    /// one is asked of the store: memory may not yet have seen a login made elsewhere (at most one look ago), and a
    /// call must not open a provider dialog for a user who is logged in.
    func currentProfile(_ requestor: Requestor, fresh: Bool = false) async throws -> Profile? {
        if let found = currentProfile(in: try await storedProfiles(requestor, fresh: fresh)) { return found }
        return fresh ? nil : currentProfile(in: try await storedProfiles(requestor, fresh: true))
    }

    /// The current profile among `stored` (one store read serves both, so that calls released together from
    /// the setRequestor queue still end in their order).
    func currentProfile(in stored: [Profile]) -> Profile? {
        let now = clock.nowMillis()
        let valid = stored.filter { $0.notAfter > now }
        let selected = shared.withLock { $0.selectedMVPD?.ID }
        return valid.first { $0.mvpd == selected } ?? valid.max { $0.notAfter < $1.notAfter }
    }

    /// Stores a profile durably (a login), dropping the permits cached for it.
    func saveProfile(_ profile: Profile, _ requestor: Requestor) async throws {
        let key = profileKey(requestor, profile.mvpd)
        permits.drop { $0 == key }
        try await store.saveProfile(
            StoredProfile(json: profile.json.serializedString(), notAfter: profile.notAfter), key, writer: loginWatch)
    }

    /// Deletes a profile and its authorization expiries durably (a logout), dropping its cached permits.
    func deleteProfile(_ mvpd: String, _ requestor: Requestor) async throws {
        let key = profileKey(requestor, mvpd)
        permits.drop { $0 == key }
        try await store.deleteProfile(key, writer: loginWatch)
    }

    /// init's storage check (the iOS SDK's `initWithStorageCheck`; Protocol/README.md, "Lifecycle"), before the
    /// first re-sync: `clear` always, `all` when the requestor's stored logins do not read (a corrupt database, or a
    /// value that does not read as a profile), ends each of the requestor's logins on this device at the backend (a
    /// logout per MVPD, no page, whatever it answers) and removes it here, with the selected MVPD, so that the
    /// re-sync finds nothing to bring back. `none` reads nothing.
    /// - Throws: a store failure, other than corruption, of the read (before anything is ended: a store that is away
    ///   is not a corrupt one) or of the removal; setRequestor then fails with STORE500, and its next call checks again.
    func checkStorage(_ requestor: Requestor) async throws {
        guard configuration.storageCheck != .none else { return }
        let keys = requestor.mvpds.map { profileKey(requestor, $0.ID) }
        var stored: [(ProfileKey, StoredProfile)] = []
        var sound = true
        do {
            stored = try await store.profiles(keys, fresh: true)
            sound = stored.allSatisfy { (try? JSON.parse($0.1.json))?.objectValue != nil }
        } catch let error as TokenStoreError where error.isCorruption {
            configuration.log?(.warning, "storage check: the logins of \(requestor.id) do not read: \(error)")
            sound = false
        }
        guard configuration.storageCheck == .clear || !sound else { return }
        configuration.log?(.warning, "storage check (\(configuration.storageCheck.rawValue)): ending the logins of \(requestor.id)")
        // The logins Adobe has for the device too: a login this store lost is still one the re-sync would bring back.
        let atBackend = Set(await backendLogins(requestor))
        for key in keys {
            let mvpd = requestor.mvpd(key.mvpd)
            if stored.contains(where: { $0.0 == key }) || atBackend.contains(key.mvpd) {
                let answer = await call(
                    RESTV2.logout(requestor.id, mvpd: key.mvpd, redirectURL: redirectURL(for: mvpd)), with: requestor.client(for: key.mvpd))
                if let reason = Self.logoutNotTaken(answer, mvpd: key.mvpd) {
                    let why = [reason.id, reason.message, reason.details].compactMap { $0 }.joined(separator: ": ")
                    configuration.log?(.warning, "storage check: \(why); the re-sync brings it back")
                }
            }
            try await deleteProfile(key.mvpd, requestor)
        }
        select(nil, requestor)
    }

    /// The requestor's MVPDs the backend holds a login of this device for, in the requestor's order: one `GET
    /// profiles` per service provider, an MVPD counted at the provider it is paired with. A provider that does not
    /// answer with profiles adds none.
    func backendLogins(_ requestor: Requestor) async -> [String] {
        var clients: [ObjectIdentifier: RestClient] = [:]
        for mvpd in requestor.mvpds {
            let client = requestor.client(for: mvpd.ID)
            clients[ObjectIdentifier(client)] = client
        }
        var held: [ObjectIdentifier: Set<String>] = [:]
        for (id, client) in clients {
            held[id] = Set(await call(RESTV2.profiles(requestor.id), with: client).value?.profiles.keys ?? [])
        }
        return requestor.mvpds.map(\.ID).filter { held[ObjectIdentifier(requestor.client(for: $0))]?.contains($0) == true }
    }

    /// Records the selection at once in memory; the store write is queued in order (not awaited: a lost
    /// selection costs nothing but the preference) and a failure is logged.
    func select(_ mvpd: MVPD?, _ requestor: Requestor) {
        let changed = shared.withLock { shared in
            defer { shared.selectedMVPD = mvpd }
            return shared.selectedMVPD?.ID != mvpd?.ID
        }
        guard changed else { return }
        let key = selectionKey(requestor)
        store.submit { $0.setSelectedProvider(mvpd?.ID, key) }
    }

    // MARK: checkAuthentication (Adobe's "iOS/tvOS API Reference": checkAuthentication)

    public func checkAuthentication() async -> AuthenticationStatus {
        let turn = await ready(.checkAuthentication)
        defer { endTurn(turn) }
        guard let requestor = turn.requestor else {
            return report(.failed(SDKErrorCode.genericAuthentication), requestor: nil, profile: nil, cached: false)
        }
        var partnerStatus: AdvancedStatus?
        var current: Profile?
        let stored: [Profile]
        do {
            stored = try await storedProfiles(requestor, fresh: true)
            current = currentProfile(in: stored)
            if current == nil { current = try await singleSignOnProfile(requestor) }
        } catch {
            return report(
                .failed(SDKErrorCode.genericAuthentication), requestor: requestor, profile: nil, cached: false, status: storeFailure(error))
        }
        if current == nil || current?.isPartner == true {
            // Cookbook step 3: a partner profile stands only while the platform account does.
            let check = await partnerAuthenticationCheck(requestor, profile: current)
            partnerStatus = check.status
            if current != nil, !check.valid {
                return report(
                    .failed(SDKErrorCode.userNotAuthenticated), requestor: requestor, profile: nil, cached: false,
                    status: partnerStatus ?? AdvancedStatus(.n000))
            }
        }
        if let profile = current {
            select(requestor.mvpd(profile.mvpd), requestor)
            return report(.authenticated, requestor: requestor, profile: profile, cached: true)
        }
        let now = clock.nowMillis()
        let expiredTempPass = stored.first { $0.isTemporary && $0.notAfter <= now }
        if let expiredTempPass {
            do {
                try await deleteProfile(expiredTempPass.mvpd, requestor)
            } catch {
                return report(
                    .failed(SDKErrorCode.genericAuthentication), requestor: requestor, profile: nil, cached: false,
                    status: storeFailure(error))
            }
            return report(
                .failed(SDKErrorCode.userNotAuthenticated), requestor: requestor, profile: nil, cached: false,
                status: AdvancedStatus(.n111))
        }
        return report(
            .failed(SDKErrorCode.userNotAuthenticated), requestor: requestor, profile: nil, cached: false,
            status: partnerStatus ?? AdvancedStatus(.n000))
    }

    /// Delivers setAuthenticationStatus, then the authentication tracking event, then `status` if any. A failed
    /// outcome is returned with its reasons: `status`, after those of the login in progress when it is that
    /// login's outcome (`ofLogin`), else the failed setRequestor's (`EngineMachine.reasons`).
    @discardableResult
    func report(
        _ outcome: AuthenticationStatus, requestor: Requestor?, profile: Profile?, cached: Bool, status: AdvancedStatus? = nil,
        ofLogin: Bool = false
    ) -> AuthenticationStatus {
        announce(outcome.status, errorCode: outcome.errorCode)
        if let requestor {
            let success = outcome.status == AccessEnablerStatus.success
            let head: [String?] =
                success ? ["true", profile?.mvpd, profile?.trackingGUID, cached ? "true" : "false"] : ["false", nil, nil, nil]
            delegate.sendTrackingData(head + requestor.trackingTail, forEventType: TrackingEvent.authentication)
        }
        if let status { delegate.status(status) }
        if outcome.status == AccessEnablerStatus.success, requestor != nil { armExpiry(profile) }
        guard outcome.status != AccessEnablerStatus.success else { return outcome }
        var explained = outcome
        explained.statuses = machine.reasons(outcome.statuses + (status.map { [$0] } ?? []), ofLogin: ofLogin)
        return explained
    }
}

/// One `WaitingCall`'s turn to run (`Engine.ready`): the requestor it runs under, and whether it has ended.
final class Turn {
    let requestor: Requestor?
    fileprivate(set) var ended = false

    init(requestor: Requestor?) { self.requestor = requestor }
}
