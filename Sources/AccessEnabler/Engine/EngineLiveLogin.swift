import JSON
import Synchronization

// A live login (Protocol/README.md, "Live logins"): every instance watches its requestor's logins in the store
// (`TokenStore.watch`), so that a login or logout made by another instance, another process or another daemon of
// the fleet reaches it as it happens, and its reads of the profiles come from memory meanwhile. setRequestor
// brings the store in line with the backend (`GET profiles`), as the SDK's foreground re-sync did.
extension Engine {
    /// Sends setAuthenticationStatus; the machine remembers what the host now believes.
    func announce(_ status: Int32, errorCode: String) {
        machine.told(status)
        delegate.setAuthenticationStatus(status, errorCode: errorCode)
    }

    /// Watches the logins of `requestor` (after a setRequestor that configured it), replacing the watch of an
    /// earlier requestor. A change made by someone else is handled on the engine's executor: the permits cached for
    /// the logins it touched are dropped (the profile may be another user's now, at the same MVPD), then
    /// `loginsChanged`; the instance's own writes are not delivered to it (`TokenStore.saveProfile(_:_:writer:)`).
    /// The permits of logins no longer watched are dropped now: a change to them would not be seen.
    func watchLogins(_ requestor: Requestor) {
        let logins = logins(requestor)
        permits.drop { !logins.contains($0.login) }
        loginWatch = store.watch(logins) { [weak self] changed in
            self?.after(.zero) { engine in
                engine.permits.drop { changed.contains($0.login) }
                engine.loginsChanged()
            }
        }
    }

    /// setRequestor configured `requestor` and wrote what its re-sync found: that is now what this instance knows,
    /// told to the host by its next checkAuthentication, not as a change (Protocol/README.md, "Live logins").
    func settle(_ requestor: Requestor) async throws {
        machine.settled(try await currentProfile(requestor) == nil ? AccessEnablerStatus.error : AccessEnablerStatus.success)
    }

    /// The watched logins changed (or the login's end passed): once the instance is quiet (`EngineMachine.quiet`),
    /// the current login is read again (from memory) and, when someone else moved it away from what this instance
    /// knew and from what its host was last told, one unsolicited setAuthenticationStatus says so.
    func loginsChanged() {
        checkThread()
        guard machine.loginsChanged() else { return }
        Task.immediate { await self.checkLogin() }
    }

    /// A flow or a call ended: a change that arrived meanwhile is handled once what is queued on the executor ran
    /// (the call's response among it).
    func checkPendingLoginChange() {
        guard machine.live.checkPending else { return }
        after(.zero) { $0.loginsChanged() }
    }

    /// How long after a check of the login that the store failed it is made again.
    static let loginRecheckDelay = Duration.seconds(1)

    private func checkLogin() async {
        guard let requestor = machine.readyRequestor, machine.live.announced != nil else { return }
        let current: Profile?
        do {
            current = try await currentProfile(requestor)
        } catch {
            // The store failed (logged by the store): the change is not lost, the check is made again, one at a
            // time, until the store answers.
            machine.recheckLogin {
                after(Self.loginRecheckDelay) { engine in
                    engine.machine.rechecking()
                    engine.loginsChanged()
                }
            }
            return
        }
        let check = machine.loginChecked(current == nil ? AccessEnablerStatus.error : AccessEnablerStatus.success)
        guard check != .wait else { return }
        armExpiry(current)
        guard case .announce(let status) = check else { return }
        // Who is logged in changed: the permits of the login before are not this one's.
        let logins = logins(requestor)
        permits.drop { logins.contains($0.login) }
        // A login that ended elsewhere takes its selected MVPD with it, as a logout here does.
        select(current.flatMap { requestor.mvpd($0.mvpd) }, requestor)
        announce(status, errorCode: current == nil ? SDKErrorCode.userNotAuthenticated : "")
    }

    /// The current login's end is a change too (nobody writes it): checked when its `notAfter` passes. One timer
    /// per `notAfter`, kept by the machine: a host that asks again and again arms nothing more.
    func armExpiry(_ profile: Profile?) {
        guard machine.expiryOutdated(profile?.notAfter) else { return }
        let timer = profile.map { profile in
            after(.milliseconds(max(0, profile.notAfter - clock.nowMillis()) + 1)) { engine in
                engine.machine.expired()
                engine.loginsChanged()
            }
        }
        machine.expiryArmed(profile?.notAfter, timer)?.cancel()
    }

    // MARK: foreground re-sync

    /// Brings the stored profiles in line with the backend at setRequestor: one `GET profiles` per service
    /// provider of the requestor ("Retrieve profiles", every MVPD of the device at once) adds the logins the
    /// backend has for this device and this store has not (a login made elsewhere), refreshes the changed ones
    /// (new metadata) and drops the ones the backend no longer has (logout elsewhere, expiry). None is sent while
    /// another instance of this process asks for the same device and requestor (`ProfileRequests`): its answer reaches this one
    /// through the store. Never more than one per service provider and setRequestor, within Adobe's rate limit of
    /// one per second per device (a burst of 10). Answers that say nothing certain (errors) leave the store alone;
    /// TempPass and degraded profiles (the all-MVPD call does not list them) are left alone too. A partner
    /// profile is checked alone, with the platform's current status for its MVPD (else left alone). Nothing is sent
    /// after the host went away.
    func synchronizeProfiles(_ requestor: Requestor) async throws {
        // The host went away (`cancel`, sticky): nothing more is asked of the backend for it.
        guard !machine.closed else { return }
        let stored = try await storedProfiles(requestor, fresh: true)
        for profile in stored where profile.isPartner {
            guard let header = partnerHeader(for: profile.mvpd) else { continue }
            let answer = await call(
                RESTV2.profile(requestor.id, mvpd: profile.mvpd, headers: [header]), with: requestor.client(for: profile.mvpd))
            guard let profiles = answer.value else { continue }
            if let fresh = profiles.first(preferring: profile.mvpd), fresh.mvpd == profile.mvpd {
                if fresh.json != profile.json { try await saveProfile(fresh, requestor) }
            } else {
                try await deleteProfile(profile.mvpd, requestor)
            }
        }
        var clients: [ObjectIdentifier: RestClient] = [:]
        for mvpd in requestor.mvpds {
            let client = requestor.client(for: mvpd.ID)
            clients[ObjectIdentifier(client)] = client
        }
        let now = clock.nowMillis()
        for client in clients.values {
            let flight = "\(client.scope.backend)\u{1F}\(client.scope.statementSHA256)\u{1F}\(deviceID ?? "")\u{1F}\(requestor.id)"
            guard ProfileRequests.begin(flight) else { continue }
            let answer = await call(RESTV2.profiles(requestor.id), with: client)
            ProfileRequests.end(flight)
            guard let found = answer.value?.profiles else { continue }
            for mvpd in requestor.mvpds where requestor.client(for: mvpd.ID) === client {
                let mine = stored.first { $0.mvpd == mvpd.ID }
                if let json = found[mvpd.ID], json.objectValue != nil {
                    // A TempPass is not a login made elsewhere: it comes back only when the user picks it again.
                    let fresh = Profile(mvpd: mvpd.ID, json: json)
                    if fresh.notAfter > now, !fresh.isPartner, !fresh.isTemporary, !mvpd.isTempPass, fresh.json != mine?.json {
                        try await saveProfile(fresh, requestor)
                    }
                } else if let mine, !mine.isPartner, !mine.isTemporary, !mine.isDegraded {
                    try await deleteProfile(mvpd.ID, requestor)
                }
            }
        }
    }
}

/// The `GET profiles` requests in flight in this process, by service provider scope, device and requestor: an
/// instance does not send one while another instance asks the same question (Adobe's rate limit is per device; the
/// answer is per requestor).
enum ProfileRequests {
    private static let inFlight = Mutex<Set<String>>([])

    /// Takes the slot of `key`; false when another request holds it.
    static func begin(_ key: String) -> Bool { inFlight.withLock { $0.insert(key).inserted } }

    static func end(_ key: String) { _ = inFlight.withLock { $0.remove(key) } }
}
