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
    private struct State {
        var log: [Callback] = []
        var waiters: [(predicate: @Sendable (Callback) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
    }
    private let state = Mutex(State())

    var callbacks: [Callback] { state.withLock { $0.log } }

    /// Removes and returns what was recorded so far.
    func take() -> [Callback] {
        state.withLock { state in
            defer { state.log = [] }
            return state.log
        }
    }

    /// Returns once a callback satisfying `predicate` was made (at once if it already was); no polling.
    func arrived(_ predicate: @escaping @Sendable (Callback) -> Bool) async {
        await withCheckedContinuation { continuation in
            let seen = state.withLock { state in
                if state.log.contains(where: predicate) { return true }
                state.waiters.append((predicate, continuation))
                return false
            }
            if seen { continuation.resume() }
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

    private func record(_ callback: Callback) {
        let woken = state.withLock { state in
            state.log.append(callback)
            let matching = state.waiters.filter { $0.predicate(callback) }
            state.waiters.removeAll { $0.predicate(callback) }
            return matching.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    func setRequestorComplete(_ status: Int32) { record(.setRequestorComplete(status)) }
    func setAuthenticationStatus(_ status: Int32, errorCode: String) { record(.setAuthenticationStatus(status, errorCode)) }
    func setToken(_ token: String, forResource resource: String) { record(.setToken(token, resource)) }
    func tokenRequestFailed(_ resource: String, errorCode: String, errorDescription: String) {
        record(.tokenRequestFailed(resource, errorCode, errorDescription))
    }
    func selectedProvider(_ mvpd: MVPD?) { record(.selectedProvider(mvpd)) }
    func displayProviderDialog(_ mvpds: [MVPD]) { record(.displayProviderDialog(mvpds.map(\.ID))) }
    func sendTrackingData(_ data: [String?], forEventType event: Int32) { record(.sendTrackingData(data, event)) }
    func setMetadataStatus(_ metadata: JSON, encrypted: Bool, forKey key: Int32, andArguments arguments: JSON, expires: Int64?) {
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

extension TokenStore {
    /// A SQLite store in a test's state directory (`temporaryDirectory()`).
    convenience init(directory: URL, busyTimeout: Duration = .seconds(5), log: EngineLog? = nil) throws {
        try self.init(directory: directory.path, busyTimeout: busyTimeout, log: log)
    }
}

extension BackendURL {
    /// An emulator's or a capture server's loopback URL (known to be a backend URL).
    init(_ url: URL) { try! self.init(url.absoluteString) }
}
