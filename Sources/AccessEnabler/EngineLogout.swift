import Foundation
import JSON

/// A logout waiting for handleExternalURL of the MVPD logout page (or its timeout).
struct LogoutFlow {
    let id: Int
    var waiters: [CheckedContinuation<AuthenticationStatus, Never>] = []
}

extension Engine {
    // MARK: logout (adobe-pass-sdk-notes §2.11; rest-api-v2-notes §9, §15.6)

    func logout() async -> AuthenticationStatus {
        let loggedOut = AuthenticationStatus.failed(ErrorCode.userNotAuthenticated)
        guard let requestor = await ready() else {
            delegate.setAuthenticationStatus(loggedOut.status, errorCode: loggedOut.errorCode)
            return loggedOut
        }
        var logoutURL: String?
        for profile in storedProfiles(requestor) {
            let client = requestor.client(for: profile.mvpd)
            let result = await client.call(
                "GET", "/api/v2/\(FormEncoding.escape(requestor.id))/logout/\(FormEncoding.escape(profile.mvpd))",
                query: [("redirectUrl", configuration.redirectURL)])
            if case .ok(let body) = result, let entry = body["logouts"]?[profile.mvpd] ?? body["logouts"]?.objectValue?.first(where: { _ in true })?.value,
                entry["actionName"]?.stringValue == "logout", let url = entry["url"]?.stringValue, logoutURL == nil
            {
                logoutURL = client.absolute(url)
            }
            store.set(.profile, profileKey(requestor, profile.mvpd), nil)
            store.removeAll(.preauth, prefix: profileKey(requestor, profile.mvpd))
            store.removeAll(.authz, prefix: profileKey(requestor, profile.mvpd) + "|")
        }
        select(nil, requestor)
        guard configuration.webView, let logoutURL else {
            delegate.setAuthenticationStatus(loggedOut.status, errorCode: loggedOut.errorCode)
            return loggedOut
        }
        if logoutFlow != nil { _ = finishLogout() }
        flowCounter += 1
        let id = flowCounter
        lastCompleted = nil
        logoutFlow = LogoutFlow(id: id)
        let timeout = configuration.logoutTimeout
        logoutTimer = Task {
            try? await Task.sleep(for: timeout)
            self.logoutTimedOut(id)
        }
        return await withCheckedContinuation { continuation in
            logoutFlow?.waiters.append(continuation)
            delegate.navigate(toUrl: logoutURL, useSVC: false)
        }
    }

    private func logoutTimedOut(_ id: Int) {
        if logoutFlow?.id == id { _ = finishLogout() }
    }

    /// Ends the waiting logout with setAuthenticationStatus(0, "User Not Authenticated Error").
    func finishLogout() -> AuthenticationStatus {
        let outcome = AuthenticationStatus.failed(ErrorCode.userNotAuthenticated)
        let waiters = logoutFlow?.waiters ?? []
        logoutFlow = nil
        logoutTimer?.cancel()
        logoutTimer = nil
        lastCompleted = outcome
        delegate.setAuthenticationStatus(outcome.status, errorCode: outcome.errorCode)
        for waiter in waiters { waiter.resume(returning: outcome) }
        return outcome
    }

    // MARK: getMetadata (adobe-pass-sdk-notes §2.13; DESIGN §3)

    func getMetadata(_ request: MetadataRequest, arguments: JSON) async -> MetadataStatus {
        var value = JSON.null
        var encrypted = false
        let requestor = await ready()  // queued behind a setRequestor in flight, like every getMetadata
        if case .deviceID = request {
            value = .string(deviceID)
        } else if let requestor, let profile = currentProfile(requestor) {
            switch request {
            case .authenticationExpiry:
                value = .integer(profile.notAfter)
            case .authorizationExpiry(let resource):
                let key = profileKey(requestor, profile.mvpd) + "|" + resource
                if let notAfter = store.value(.authz, key).flatMap({ Int64($0) }), notAfter > clock.nowMillis() {
                    value = .integer(notAfter)
                }
            case .userMetadata(let name):
                if name == "tokenSource" {
                    value = .string(profile.issuer == "Apple" ? "Apple" : profile.mvpd)
                } else if let attribute = profile.attribute(name) {
                    value = attribute.value
                    encrypted = attribute.encrypted
                }
            case .deviceID:
                break
            }
        }
        let status = MetadataStatus(metadata: value, encrypted: encrypted, key: request.key, arguments: arguments)
        delegate.setMetadataStatus(status.metadata, encrypted: status.encrypted, forKey: status.key, andArguments: status.arguments)
        return status
    }
}
