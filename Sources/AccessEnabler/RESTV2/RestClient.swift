import Glibc
import JSON
import Synchronization
import ThreadAffinity

/// What a REST V2 call ended with.
enum APIResult: Sendable {
    /// 2xx with a JSON body (`.null` for an empty body).
    case ok(JSON)
    /// Non-2xx; `error` is the enhanced error object when the body was one.
    case httpError(status: Int, error: JSON?)
    /// 429 after the bounded retries.
    case throttled
    /// 2xx whose body is not JSON (wrong content type, malformed or truncated).
    case garbage
    case transport(TransportFailure)
    /// DCR failed: the software statement was refused (R400) or no access token could be had (R401).
    case registration(RegistrationFailure)
    /// The store failed while reading or keeping the client credentials or the access token.
    case store(TokenStoreError)
}

enum RegistrationFailure: Sendable, Equatable {
    case invalidSoftwareStatement
    case accessTokenUnavailable
}

/// Headers every REST V2 request of an instance carries, read at call time (setOptions may change them).
struct DeviceHeaders: Sendable {
    /// `AP-Device-Identifier`: `fingerprint` and the base64 of the device id (`DeviceInfo.deviceIdentifierHeader`),
    /// made once per client, since the device id of a client never changes.
    var deviceIdentifier: String
    var deviceInfo: String
    var visitorID: String?
    /// `X-Forwarded-For`: the device's address when a host acts for it.
    var forwardedFor: String?
    /// `Adobe-Subject-Token` / `AD-Service-Token`, for the endpoints that take them (`Endpoint.singleSignOn`).
    var singleSignOn: [(String, String)] = []
}

/// The REST API V2 + DCR client of one backend (service provider) URL (Adobe Pass REST API V2 and its headers,
/// "Dynamic Client Registration API", "Throttling mechanism").
///
/// Client credentials are kept forever per (backend URL, software statement); the access token is cached in
/// the store, refreshed before expiry and once after a 401, never by re-registering. 429 waits at least 1 s,
/// `maxThrottleRetries` times at most.
actor RestClient {
    /// The executor this actor runs on: its engine's, so that a call and its REST exchange stay on one thread.
    nonisolated let executor: any TimerExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    let baseURL: BackendURL
    /// nil: never register; only the client credentials stored under ``scope`` are used (`passbridge state logout`).
    private let softwareStatement: String?
    private let redirectURL: String
    private let store: TokenStore
    private let clock: SkewedClock
    private let transport: any HTTPClient
    private let timeout: Duration
    private let maxThrottleRetries: Int
    private let headers: @Sendable () -> DeviceHeaders
    /// A `Date` header put the device clock over the CFG100 threshold since the last answer was returned.
    private var clockSkewNoticed = false
    private let log: EngineLog?
    private var tokenTask: Task<String?, Never>?
    /// The access token last read from or written to the store by any client of this scope in the process, used
    /// without asking the store again until a minute before it expires or until the backend refuses it (every
    /// connection has clients of its own: a new one needs no store call for the token).
    private var heldToken: AccessTokenRecord? {
        get { Self.heldTokens.withLock { $0[scope] } }
        set {
            Self.heldTokens.withLock { held in
                if held.count >= 64, held[scope] == nil { held.removeAll() }  // scopes a host made up do not pile up
                held[scope] = newValue
            }
        }
    }

    private static let heldTokens = Mutex<[StoreScope: AccessTokenRecord]>([:])
    private var registrationRefused = false
    /// Why the last token fetch failed when the backend could not be reached or the store failed (then no R4xx
    /// applies).
    private var tokenTransportFailure: APIResult?

    /// Store key of this (backend URL, software statement) pair.
    nonisolated let scope: StoreScope

    init(
        executor: any TimerExecutor = ThreadExecutor.shared, baseURL: BackendURL, softwareStatement: String?, redirectURL: String,
        store: TokenStore, clock: SkewedClock,
        transport: any HTTPClient, timeout: Duration, maxThrottleRetries: Int,
        headers: @escaping @Sendable () -> DeviceHeaders, log: EngineLog? = nil,
        scope: StoreScope? = nil
    ) {
        self.executor = executor
        self.baseURL = baseURL
        self.softwareStatement = softwareStatement
        self.redirectURL = redirectURL
        self.store = store
        self.clock = clock
        self.transport = transport
        self.timeout = timeout
        self.maxThrottleRetries = maxThrottleRetries
        self.headers = headers
        self.log = log
        self.scope = scope ?? Self.scope(baseURL: baseURL, softwareStatement: softwareStatement ?? "")
    }

    static func scope(baseURL: BackendURL, softwareStatement: String) -> StoreScope {
        StoreScope(backend: baseURL.base, statementSHA256: Hash.statementSHA256(softwareStatement))
    }

    /// An absolute URL for a path the backend returned (relative or absolute).
    nonisolated func absolute(_ urlString: String) -> String {
        if urlString.hasPrefix("http://") || urlString.hasPrefix("https://") { return urlString }
        return baseURL.base + (urlString.hasPrefix("/") ? "" : "/") + urlString
    }

    // MARK: REST V2 calls

    /// Sends one REST V2 request with the bearer and device headers (+ `headers`, e.g. the partner status);
    /// `path` starts with `/api/v2/`. The engine uses the typed `call(_:)` with a `RESTV2` endpoint.
    func call(
        _ method: String, _ path: String, query: [(String, String)] = [], form: [(String, String)]? = nil, json: JSON? = nil,
        headers extra: [(String, String)] = []
    ) async -> APIResult {
        let body: Endpoint<JSON>.Body? = form.map { .form($0) } ?? json.map { .json($0) }
        return await call(Endpoint(method: method, path: path, query: query, headers: extra, body: body, decode: { $0 })).result
    }

    /// Sends one REST V2 endpoint with the bearer and device headers; a 401 refreshes the access token and
    /// sends once more. The answer says whether the device clock just went over the CFG100 threshold.
    func call<Response>(_ endpoint: Endpoint<Response>) async -> EndpointAnswer<Response> {
        var answer = await exchange(endpoint)
        answer.clockSkewed = clockSkewNoticed
        clockSkewNoticed = false
        return answer
    }

    private func exchange<Response>(_ endpoint: Endpoint<Response>) async -> EndpointAnswer<Response> {
        var refreshed = false
        while true {
            guard let token = await accessToken(refusing: nil) else { return endpoint.answer(tokenFailure()) }
            let request = endpoint.request(on: baseURL, token: token, device: headers())
            let result = await send(request)
            if case .httpError(401, _) = result, !refreshed {
                refreshed = true
                if await accessToken(refusing: token) == nil { return endpoint.answer(tokenFailure()) }
                continue
            }
            return endpoint.answer(result)
        }
    }

    private func tokenFailure() -> APIResult {
        if registrationRefused { return .registration(.invalidSoftwareStatement) }
        return tokenTransportFailure ?? .registration(.accessTokenUnavailable)
    }

    /// Notes a DCR answer: transport failures and throttling are not registration problems.
    private func noteDCR(_ result: APIResult) {
        switch result {
        case .transport, .throttled: tokenTransportFailure = result
        default: tokenTransportFailure = nil
        }
    }

    /// Sends with the 429 rule and classifies the answer.
    private func send(_ request: RESTRequest) async -> APIResult {
        var attempt = 0
        while true {
            let result = await transport.perform(isolation: self, request, timeout: timeout)
            log?(.debug, Self.logLine(request, result))
            if case .failure(.unavailable(let reason)) = result {
                log?(.error, "no HTTP: libcurl could not be loaded: \(reason) (Debian package: libcurl4)")
            }
            guard case .response(let status, let headers, let body) = result else {
                if case .failure(let failure) = result { return .transport(failure) }
                return .transport(.network)
            }
            if let date = headers.date, clock.observe(dateHeader: date) { clockSkewNoticed = true }
            if status == 429 {
                attempt += 1
                if attempt > maxThrottleRetries { return .throttled }
                let retryAfter = headers.retryAfter.flatMap(Double.init) ?? 1
                await uncancelledSleep(for: .seconds(max(1, min(retryAfter, 10))), on: executor)
                continue
            }
            if (300..<400).contains(status) {
                // Never followed: the next hop could be plain http, and the request carries credentials.
                log?(.debug, "\(request.method) \(request.path): redirect to \(headers.location ?? "nowhere") not followed")
                return .transport(.network)
            }
            let isJSON = headers.contentType.map { ASCII.contains($0, "json") } ?? false
            let parsed = isJSON ? body.withUnsafeBytes { try? JSON.parse($0) } : nil
            if (200..<300).contains(status) {
                if body.isEmpty { return .ok(.null) }
                guard let parsed else { return .garbage }
                return .ok(parsed)
            }
            return .httpError(status: status, error: parsed.flatMap { $0.objectValue != nil ? $0 : nil })
        }
    }

    /// `GET /api/v2/REF/profiles/code/<code> → 200`: no query, the authentication code redacted.
    static func logLine(_ request: RESTRequest, _ result: HTTPResult) -> String {
        var path = request.path
        if let end = ASCII.end(of: "/code/", in: path) { path = String(path.utf8[..<end])! + "<code>" }
        if path.hasPrefix("/api/v2/authenticate/") { path = "/api/v2/authenticate/<code>" }
        let outcome: String
        switch result {
        case .response(let status, _, _): outcome = String(status)
        case .failure(let failure): outcome = "\(failure)"
        }
        return "\(request.method) \(path) → \(outcome)"
    }

    // MARK: DCR ("Dynamic Client Registration API")

    /// The cached access token, or a new one from the stored client credentials (registering only when
    /// there are none). `refusing`: the token the backend just refused (401), never taken again. Concurrent
    /// callers share one fetch.
    func accessToken(refusing refused: String?) async -> String? {
        if let held = usable(heldToken, refusing: refused) { return held }
        if let task = tokenTask { return await task.value }
        tokenTransportFailure = nil
        do {
            if let cached = usable(try await store.accessToken(scope), refusing: refused) { return cached }
        } catch {
            return storeFailed(error)
        }
        // Preferring the actor's executor: the store calls inside (nonisolated) run there too, not on Swift's
        // global pool, whose threads would then stay.
        let task = Task(executorPreference: executor) { await self.fetchToken(replacing: refused) }
        tokenTask = task
        let token = await task.value
        tokenTask = nil
        return token
    }

    /// `record`'s token when it is not `refused` and has more than a minute left (then it is held); else nil.
    private func usable(_ record: AccessTokenRecord?, refusing refused: String?) -> String? {
        guard let record, record.token != refused, clock.nowMillis() + 60_000 < record.expires else { return nil }
        heldToken = record
        return record.token
    }

    /// Notes a store failure as the reason no token could be had.
    private func storeFailed(_ error: any Error) -> String? {
        tokenTransportFailure = .store(error as? TokenStoreError ?? .io(operation: "store", errno: EIO))
        return nil
    }

    /// A token from the stored client credentials. Only when the backend says those credentials are unknown
    /// (`invalid_client`, "Dynamic Client Registration API") are they dropped and the application registered again, once.
    /// Where several processes share the store, one of them refreshes while the others wait for its token
    /// (`replacing`: the token the backend refused, which must not be taken again).
    /// A refresh that fails gives its lease back, so that the next call (of any process) tries again at once
    /// instead of waiting out the lease.
    private func fetchToken(replacing refused: String?) async -> String? {
        let lease: Int64?
        do {
            switch try await awaitSharedRefresh(replacing: refused) {
            case .shared(let token): return token
            case .claimed(let until): lease = until
            case .unclaimed: lease = nil
            }
        } catch {
            return storeFailed(error)
        }
        let token = await refreshToken()
        // The failure already noted is the reason given; a lease the store cannot give back runs out in 10 s.
        if token == nil, let lease { try? await store.releaseTokenRefresh(scope, until: lease) }
        return token
    }

    /// A new token from the stored (or newly registered) client credentials; nil when none could be had.
    private func refreshToken() async -> String? {
        for attempt in 0..<2 {
            let credentials: ClientCredentials
            do {
                guard let stored = try await clientCredentials() else { return nil }
                credentials = stored
            } catch {
                return storeFailed(error)
            }
            let endpoint = RESTV2.token(credentials)
            let result = await send(endpoint.request(on: baseURL, token: "", device: headers()))
            noteDCR(result)
            if case .httpError(let status, let error) = result, status == 400 || status == 401,
                RegistrationError(error).isInvalidClient, attempt == 0
            {
                do { try await store.deleteClientCredentials(scope, clientID: credentials.id) } catch { return storeFailed(error) }
                continue
            }
            return await storeToken(endpoint.answer(result).value, clientID: credentials.id)
        }
        return nil
    }

    /// What ``awaitSharedRefresh(replacing:)`` found: another process's token, the lease this process took (until,
    /// epoch ms), or neither after 10 s of waiting (this process refreshes without a lease).
    private enum SharedRefresh {
        case shared(String)
        case claimed(until: Int64)
        case unclaimed
    }

    /// Takes the refresh of this scope's token, or when another process holds it, waits (up to 10 s) for the token
    /// it stores.
    private func awaitSharedRefresh(replacing refused: String?) async throws -> SharedRefresh {
        for _ in 0..<100 {
            let now = clock.nowMillis()
            let stored = try await store.accessToken(scope)
            if let token = usable(stored, refusing: refused) { return .shared(token) }
            let until = now + 10_000
            if try await store.claimTokenRefresh(scope, seen: stored?.token ?? "", now: now, until: until) { return .claimed(until: until) }
            await uncancelledSleep(for: .milliseconds(100), on: executor)
        }
        return .unclaimed
    }

    private func storeToken(_ answer: TokenAnswer?, clientID: String) async -> String? {
        guard let answer else { return nil }
        let token = answer.accessToken
        let created = answer.createdAt ?? clock.nowMillis()
        let record = AccessTokenRecord(clientID: clientID, token: token, expires: created + answer.expiresIn * 1000)
        do {
            try await store.saveAccessToken(record, scope)
        } catch {
            return storeFailed(error)
        }
        heldToken = record
        return token
    }

    /// Client credentials: stored ones, else registered once and kept forever (the first writer wins when
    /// several processes register at the same time).
    private func clientCredentials() async throws -> ClientCredentials? {
        if let stored = try await store.clientCredentials(scope) { return stored }
        guard !registrationRefused, let softwareStatement else { return nil }
        let endpoint = RESTV2.register(softwareStatement: softwareStatement, redirectURL: redirectURL)
        let result = await send(endpoint.request(on: baseURL, token: "", device: headers()))
        noteDCR(result)
        switch result {
        case .ok:
            guard let credentials = endpoint.answer(result).value else { return nil }
            return try await store.insertClientCredentials(credentials, scope)
        case .httpError(let status, let error) where status == 400 || status == 401:
            if RegistrationError(error).refusesSoftwareStatement || status == 401 { registrationRefused = true }
            return nil
        default:
            return nil
        }
    }
}
