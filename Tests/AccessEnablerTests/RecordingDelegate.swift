import AccessEnabler
import Foundation
import JSON
import Synchronization

/// One delegate callback with its parameters.
enum Callback: Equatable {
    case setRequestorComplete(Int32)
    case setAuthenticationStatus(Int32, String)
    case setToken(String, String)
    case tokenRequestFailed(String, String, String)
    case selectedProvider(MVPD?)
    case displayProviderDialog([String])
    case sendTrackingData([String?], Int32)
    case setMetadataStatus(JSON, Bool, Int32, JSON)
    case preauthorizedResources([String])
    case navigate(String, Bool)
    case presentTvProviderDialog
    case dismissTvProviderDialog
    case status(AdvancedStatus)
}

/// Records every callback in order, and lets a test wait for one.
final class RecordingDelegate: EntitlementDelegate {
    private let log = Mutex<[Callback]>([])

    var callbacks: [Callback] { log.withLock { $0 } }

    /// Removes and returns what was recorded so far.
    func take() -> [Callback] {
        log.withLock { log in
            let taken = log
            log = []
            return taken
        }
    }

    /// Waits (polling, up to `timeout` seconds) until a recorded callback satisfies `predicate`.
    func wait(timeout: TimeInterval = 10, for predicate: (Callback) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if callbacks.contains(where: predicate) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    private func record(_ callback: Callback) { log.withLock { $0.append(callback) } }

    func setRequestorComplete(_ status: Int32) { record(.setRequestorComplete(status)) }
    func setAuthenticationStatus(_ status: Int32, errorCode: String) { record(.setAuthenticationStatus(status, errorCode)) }
    func setToken(_ token: String, forResource resource: String) { record(.setToken(token, resource)) }
    func tokenRequestFailed(_ resource: String, errorCode: String, errorDescription: String) {
        record(.tokenRequestFailed(resource, errorCode, errorDescription))
    }
    func selectedProvider(_ mvpd: MVPD?) { record(.selectedProvider(mvpd)) }
    func displayProviderDialog(_ mvpds: [MVPD]) { record(.displayProviderDialog(mvpds.map(\.ID))) }
    func sendTrackingData(_ data: [String?], forEventType event: Int32) { record(.sendTrackingData(data, event)) }
    func setMetadataStatus(_ metadata: JSON, encrypted: Bool, forKey key: Int32, andArguments arguments: JSON) {
        record(.setMetadataStatus(metadata, encrypted, key, arguments))
    }
    func preauthorizedResources(_ resources: [String]) { record(.preauthorizedResources(resources)) }
    func navigate(toUrl url: String, useSVC: Bool) { record(.navigate(url, useSVC)) }
    func presentTvProviderDialog() { record(.presentTvProviderDialog) }
    func dismissTvProviderDialog() { record(.dismissTvProviderDialog) }
    func status(_ status: AdvancedStatus) { record(.status(status)) }
}

/// Root of every state directory the tests create in this process (removed at the end of each emulator test).
let testRoot = FileManager.default.temporaryDirectory.appendingPathComponent("ae-tests-\(getpid())")

/// A fresh state directory under the test root.
func temporaryDirectory() -> URL {
    testRoot.appendingPathComponent(UUID().uuidString.lowercased()).appendingPathComponent("state")
}
