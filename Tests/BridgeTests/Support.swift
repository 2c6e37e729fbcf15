import AccessEnabler
import Foundation
import JSON
import JSONRPC
import Synchronization
import XCTest

@testable import Bridge

/// One message the bridge wrote, in write order.
enum Written: Equatable {
    case result(RequestID, JSON)
    case error(RequestID, ErrorObject)
    case notification(String, JSON)
}

/// An `Outbound` that records what the bridge writes.
final class Recorder: Outbound {
    let messages = Mutex<[Written]>([])

    func respond(to id: RequestID, result: JSON) { messages.withLock { $0.append(.result(id, result)) } }
    func respond(to id: RequestID, error: ErrorObject) { messages.withLock { $0.append(.error(id, error)) } }
    func notify(method: String, params: JSON) { messages.withLock { $0.append(.notification(method, params)) } }

    var all: [Written] { messages.withLock { $0 } }

    /// Waits (up to 5 s) until request `id` is answered; returns everything written up to and including it.
    func waitForAnswer(_ id: Int64, file: StaticString = #filePath, line: UInt = #line) -> [Written] {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            let current = all
            if let index = current.firstIndex(where: { $0.answers(id) }) { return Array(current[...index]) }
            Thread.sleep(forTimeInterval: 0.005)
        }
        XCTFail("no answer to request \(id); written: \(all)", file: file, line: line)
        return all
    }
}

extension Written {
    func answers(_ id: Int64) -> Bool {
        switch self {
        case .result(let rid, _), .error(let rid, _): return rid == RequestID(id)
        case .notification: return false
        }
    }
}

/// An engine scripted after the SDK's callback sequences; records the calls it gets.
final class FakeEngine: AccessEnabler {
    let configuration: AccessEnablerConfiguration
    let delegate: EntitlementDelegate
    let calls = Mutex<[String]>([])
    let cancelled = Atomic<Bool>(false)

    static let mock = MVPD(ID: "MockMVPD", displayName: "Mock Cable", logoURL: "https://logo.example/m.png")
    static let tempPass = MVPD(ID: "TempPass", displayName: "Free Preview", isTempPass: true)
    static let sso = MVPD(
        ID: "MockSSO", displayName: "Mock SSO TV", enablePlatformServices: true, boardingStatus: "SUPPORTED",
        displayInPlatformPicker: true, platformMappingId: "MockSSO", requiresSVC: true)

    init(configuration: AccessEnablerConfiguration, delegate: EntitlementDelegate) {
        self.configuration = configuration
        self.delegate = delegate
    }

    private func record(_ call: String) { calls.withLock { $0.append(call) } }

    func setOptions(_ options: JSONObject) { record("setOptions \(JSON.object(options).serializedString())") }

    func setRequestor(
        _ requestorID: String, serviceProviders: [BackendURL]?, answered: @Sendable (RequestorStatus) -> Void
    ) async -> RequestorStatus {
        record("setRequestor \(requestorID) \(serviceProviders?.map(\.text) ?? [])")
        try? await Task.sleep(for: .milliseconds(50))
        delegate.setRequestorComplete(1)
        answered(RequestorStatus(status: 1))
        return RequestorStatus(status: 1)
    }

    func checkAuthentication() async -> AuthenticationStatus {
        record("checkAuthentication")
        delegate.setAuthenticationStatus(0, errorCode: "User Not Authenticated Error")
        delegate.sendTrackingData(["false", nil, nil, nil, "unknown", "restApiV2", "Linux"], forEventType: 0)
        delegate.status(AdvancedStatus(id: "N000", level: "info", message: "The user is not authenticated"))
        return AuthenticationStatus(status: 0, errorCode: "User Not Authenticated Error")
    }

    func getAuthentication(forceAuthn: Bool, data: JSONObject?, filter: ProviderFilter?) async -> AuthenticationStatus {
        record("getAuthentication \(forceAuthn) \(data.map { JSON.object($0).serializedString() } ?? "nil") \(filter?.tvProviders ?? [])")
        delegate.displayProviderDialog([Self.mock, Self.tempPass, Self.sso])
        return AuthenticationStatus(status: 1, errorCode: "")
    }

    func setSelectedProvider(_ mvpdId: String?) async -> SelectionOutcome {
        record("setSelectedProvider \(mvpdId ?? "nil")")
        switch mvpdId {
        case "MockMVPD"?:
            delegate.navigate(toUrl: "http://127.0.0.1:1/login?code=1", useSVC: false)
            return .started
        case "Phone"?:
            delegate.status(
                AdvancedStatus(
                    id: "REGCODE", level: "info", code: "AB12CD", url: "http://127.0.0.1:1/activate", notAfter: 1_800_000_000_123))
            return .started
        default:
            delegate.setAuthenticationStatus(0, errorCode: "Provider not Selected Error")
            delegate.status(AdvancedStatus(id: "N005", level: "info"))
            return .ended(AuthenticationStatus(status: 0, errorCode: "Provider not Selected Error"))
        }
    }

    nonisolated func isRedirectURL(_ url: String) -> Bool { url.hasPrefix("adobepass://ios.app") }
    nonisolated var redirectURLs: [String] { ["adobepass://ios.app"] }

    func handleExternalURL(_ url: String) async throws(AccessEnablerError) -> AuthenticationStatus {
        guard isRedirectURL(url) else { throw .invalidRedirectURL(url) }
        record("handleExternalURL")
        delegate.setAuthenticationStatus(1, errorCode: "")
        return AuthenticationStatus(status: 1, errorCode: "")
    }

    func getAuthenticationToken() async -> AuthenticationStatus {
        try! await handleExternalURL("adobepass://ios.app")
    }

    func checkPreauthorizedResources(_ resources: [String], cache: Bool) async -> PreauthorizedResources {
        record("checkPreauthorizedResources \(resources) \(cache)")
        let allowed = resources.filter { $0 != "ch2" }
        delegate.preauthorizedResources(allowed)
        return PreauthorizedResources(resources: allowed)
    }

    func checkAuthorization(_ resource: String, data: JSONObject?) async -> AuthorizationOutcome {
        record("checkAuthorization \(resource) \(data.map { JSON.object($0).serializedString() } ?? "nil")")
        if resource == "ch2" {
            let details = "Your subscription does not include \"Channel 2\"."
            delegate.tokenRequestFailed(resource, errorCode: "User not Authorized Error", errorDescription: details)
            let denied = AdvancedStatus(id: "Z100", level: "error", details: details, resource: resource)
            delegate.status(denied)
            return .failed(resource: resource, errorCode: "User not Authorized Error", errorDescription: details, statuses: [denied])
        }
        delegate.setToken("bWVkaWEtdG9rZW4=", forResource: resource)
        delegate.sendTrackingData(["true", "MockMVPD", "guid", "false", nil, nil, "unknown", "restApiV2", "Linux"], forEventType: 1)
        return .token(token: "bWVkaWEtdG9rZW4=", resource: resource)
    }

    /// `waits`: waits on the user until its task is cancelled (the bridge's `$/cancelRequest`), then fails as a
    /// cancelled login does.
    func getAuthorization(_ resource: String, data: JSONObject?) async -> AuthorizationOutcome {
        guard resource == "waits" else { return await checkAuthorization(resource, data: data) }
        record("getAuthorization waits")
        while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
        delegate.tokenRequestFailed(resource, errorCode: "Provider not Selected Error", errorDescription: "")
        return .failed(resource: resource, errorCode: "Provider not Selected Error", errorDescription: "")
    }

    func logout() async -> AuthenticationStatus {
        record("logout")
        delegate.setAuthenticationStatus(0, errorCode: "User Not Authenticated Error")
        return AuthenticationStatus(status: 0, errorCode: "User Not Authenticated Error")
    }

    func getSelectedProvider() -> MVPD? {
        record("getSelectedProvider")
        delegate.selectedProvider(nil)
        return nil
    }

    func getMetadata(_ request: MetadataRequest, arguments: JSON) async -> MetadataStatus {
        record("getMetadata \(request)")
        let value: JSON
        switch request {
        case .authenticationExpiry, .authorizationExpiry: value = .integer(1_800_000_000_000)
        case .deviceID: value = "device-1"
        case .userMetadata(let key): value = key == "zip" ? "ZW5jcnlwdGVk" : .null
        case .userMetadataObject: value = ["updated": 1_800_000_000, "encrypted": ["zip"], "data": ["zip": "ZW5jcnlwdGVk"]]
        }
        let status = MetadataStatus(
            metadata: value, encrypted: request == .userMetadata(key: "zip"), key: request.key, arguments: arguments)
        delegate.setMetadataStatus(
            status.metadata, encrypted: status.encrypted, forKey: status.key, andArguments: status.arguments, expires: status.expires)
        return status
    }

    func preauthorize(_ resources: [String], localCache: Bool) async -> PreauthorizeResponse {
        record("preauthorize \(resources) \(localCache)")
        return PreauthorizeResponse(status: nil, decisions: [])
    }

    func cancel() async { close() }

    /// Admission as the engine's machine does it: refused before a setRequestor, nothing after close.
    private let admission = Mutex<(requestor: Bool, closed: Bool)>((false, false))

    func admit(_ call: CallAdmission) -> Admission {
        admission.withLock { state in
            if state.closed { return .closed }
            if case .setRequestor = call { state.requestor = true }
            if case .needsRequestor = call, !state.requestor { return .requestorNotSet }
            return .admitted
        }
    }

    func close() {
        record("cancel")
        cancelled.store(true, ordering: .sequentiallyConsistent)
        admission.withLock { $0.closed = true }
    }
}

/// The engines a harness's factory made, in order.
final class EngineList: Sendable {
    private let list = Mutex<[FakeEngine]>([])
    func append(_ engine: FakeEngine) { list.withLock { $0.append(engine) } }
    func withLock<T>(_ body: ([FakeEngine]) -> T) -> T { list.withLock { body($0) } }
}

/// A bridge on fake engines, with one recorded connection and its instance.
final class Harness {
    let engines = EngineList()
    let configuration: BridgeConfiguration
    let statistics = BridgeStatistics()
    let connection = Recorder()
    private(set) var instance: ApplicationInstance!
    private var nextID: Int64 = 0

    init() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bridge-tests-\(UUID().uuidString)")
        let store = try TokenStore(directory: directory.path)
        let template = AccessEnablerConfiguration(backendURL: try BackendURL("http://127.0.0.1:1"), softwareStatement: "flag.jwt.sig")
        configuration = BridgeConfiguration(engine: template, store: store)
        instance = makeInstance(writingTo: connection)
    }

    /// Another connection's instance, on the same configuration and statistics, its engines in `engines`.
    func makeInstance(writingTo outbound: any Outbound) -> ApplicationInstance {
        let engines = self.engines
        return ApplicationInstance(outbound: outbound, configuration: configuration, statistics: statistics) { configuration, delegate in
            let engine = FakeEngine(configuration: configuration, delegate: delegate)
            engines.append(engine)
            return engine
        }
    }

    /// Connections with an open instance (what `rpc.stats` reports as `connections`).
    var openInstances: Int { statistics.connections.load(ordering: .relaxed) }

    /// Sends a request and returns its id.
    @discardableResult
    func send(_ method: String, _ params: JSON? = nil) -> Int64 {
        nextID += 1
        instance.handle(method: method, params: params, id: RequestID(nextID))
        return nextID
    }

    /// Sends a request and waits for everything written up to its answer.
    @discardableResult
    func call(_ method: String, _ params: JSON? = nil, file: StaticString = #filePath, line: UInt = #line) -> [Written] {
        connection.waitForAnswer(send(method, params), file: file, line: line)
    }

    /// The messages written for one call, after the ones already seen.
    func callFresh(_ method: String, _ params: JSON? = nil) -> [Written] {
        let before = connection.all.count
        return Array(call(method, params).dropFirst(before))
    }

    var engine: FakeEngine? { engines.withLock { $0.last } }
}

/// The repository root (for Protocol/openrpc.json).
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
