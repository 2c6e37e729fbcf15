import JSON

/// One REST API V2 or DCR operation as it goes on the wire: method, escaped path, query, extra headers and
/// body, and how a 2xx body is read into `Response`. The operations the engine uses are built by the `RESTV2`
/// constructors (`Endpoints.swift`); `RestClient` only adds the credentials and sends.
struct Endpoint<Response: Sendable>: Sendable {
    /// Which credentials and fixed headers the request carries.
    enum Kind: Sendable {
        /// REST API V2: the bearer token and the device headers, then the endpoint's own headers.
        case api
        /// DCR: no bearer; `Content-Type`, `Accept` and `X-Device-Info` only (Adobe's "DCR API" OpenAPI document).
        case registration
    }

    /// A request body and its media type.
    enum Body: Sendable {
        /// `application/x-www-form-urlencoded`, encoded by `FormEncoding`.
        case form([(String, String)])
        /// `application/json;charset=utf-8`.
        case json(JSON)

        var contentType: String {
            switch self {
            case .form: "application/x-www-form-urlencoded"
            case .json: "application/json;charset=utf-8"
            }
        }

        var bytes: [UInt8] {
            switch self {
            case .form(let pairs): Array(FormEncoding.encode(pairs).utf8)
            case .json(let value): value.serialized()
            }
        }
    }

    var kind: Kind = .api
    var method: String
    /// Starts with `/`; every segment taken from a caller already escaped (`RESTV2.segment`).
    var path: String
    var query: [(String, String)] = []
    /// Sent after the fixed headers, in this order (partner framework status, TempPass identity, …).
    var headers: [(String, String)] = []
    var body: Body?
    /// Whether the single sign-on headers (`DeviceHeaders.singleSignOn`) go with it: sessions create, profiles,
    /// decisions and logout (Adobe Pass REST API V2, the single sign-on flows).
    var singleSignOn = false
    /// A 2xx body read into the response; nil when it is not one (the raw result is then all there is).
    var decode: @Sendable (JSON) -> Response?

    /// The URL on `baseURL` (its trailing `/` dropped): the path's segments are escaped and the query
    /// form-encoded, so it is a valid URL whenever `baseURL` is.
    func url(on baseURL: BackendURL) -> String {
        var text = baseURL.base + path
        if !query.isEmpty { text += "?" + FormEncoding.encode(query) }
        return text
    }

    /// The whole request: REST API V2 calls carry `Authorization`, `AP-Device-Identifier`, `X-Device-Info`,
    /// `Accept`, then `AP-Visitor-Identifier` and `X-Forwarded-For` when set, the single sign-on tokens on the
    /// endpoints that take them, the endpoint's headers and last
    /// `Content-Type` (Adobe's "REST API V2" OpenAPI document); DCR calls `Content-Type`, `Accept`, `X-Device-Info`.
    /// `token` is ignored for DCR.
    func request(on baseURL: BackendURL, token: String, device: DeviceHeaders) -> RESTRequest {
        var request = RESTRequest(method: method, url: url(on: baseURL), path: path)
        switch kind {
        case .api:
            request.headers = [
                ("Authorization", "Bearer " + token),
                ("AP-Device-Identifier", device.deviceIdentifier),
                ("X-Device-Info", device.deviceInfo),
                ("Accept", "application/json"),
            ]
            if let visitor = device.visitorID { request.headers.append(("AP-Visitor-Identifier", visitor)) }
            if let address = device.forwardedFor { request.headers.append(("X-Forwarded-For", address)) }
            if singleSignOn { request.headers += device.singleSignOn }
            request.headers += headers
            if let body { request.headers.append(("Content-Type", body.contentType)) }
        case .registration:
            if let body { request.headers.append(("Content-Type", body.contentType)) }
            request.headers += [("Accept", "application/json"), ("X-Device-Info", device.deviceInfo)]
            request.headers += headers
        }
        request.body = body?.bytes
        return request
    }

    /// The same endpoint, sent with the single sign-on headers.
    func withSingleSignOn() -> Endpoint {
        var endpoint = self
        endpoint.singleSignOn = true
        return endpoint
    }

    /// Reads a call's result: the typed value for a 2xx body that is one.
    func answer(_ result: APIResult) -> EndpointAnswer<Response> {
        if case .ok(let body) = result { return EndpointAnswer(result: result, value: decode(body)) }
        return EndpointAnswer(result: result, value: nil)
    }
}

/// What one endpoint call ended with: the raw result (for the engine's failure rules) and, for a 2xx body of
/// the expected shape, its typed value.
struct EndpointAnswer<Value: Sendable>: Sendable {
    var result: APIResult
    /// nil unless the call ended 2xx with a body `Endpoint.decode` read.
    var value: Value?
    /// This call's answer (or that of a token request it waited for) carried a `Date` that put the device clock
    /// more than 5 minutes off the backend's, for the first time since it was last within them (status CFG100).
    var clockSkewed = false

    /// The enhanced error of a non-2xx answer, if its body was one.
    var error: EnhancedError? { result.enhancedError }
}

extension APIResult {
    /// The enhanced error of a non-2xx answer whose body was an object.
    var enhancedError: EnhancedError? {
        if case .httpError(_, let error) = self { return EnhancedError(error) }
        return nil
    }
}
