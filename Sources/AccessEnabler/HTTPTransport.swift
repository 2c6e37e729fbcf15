import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// URLSession with a hard per-request deadline (the task is cancelled when it passes).
final class HTTPTransport: HTTPClient {
    /// One session for every engine instance of the process.
    static let shared = HTTPTransport()

    private let session: URLSession

    init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration)
    }

    func perform(_ request: HTTPRequest, timeout: Duration) async -> HTTPResult {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        urlRequest.timeoutInterval = timeout.seconds
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        let once = Once()
        let timer = Mutex<Task<Void, Never>?>(nil)
        return await withCheckedContinuation { (continuation: CheckedContinuation<HTTPResult, Never>) in
            let task = session.dataTask(with: urlRequest) { data, response, error in
                guard once.claim() else { return }
                timer.withLock { $0?.cancel() }
                continuation.resume(returning: Self.result(data, response, error))
            }
            timer.withLock { timer in
                timer = Task {
                    try? await Task.sleep(for: timeout)
                    guard !Task.isCancelled, once.claim() else { return }
                    task.cancel()
                    continuation.resume(returning: .failure(.timeout))
                }
            }
            task.resume()
        }
    }

    private static func result(_ data: Data?, _ response: URLResponse?, _ error: (any Error)?) -> HTTPResult {
        if let http = response as? HTTPURLResponse, error == nil {
            var headers: [String: String] = [:]
            for (key, value) in http.allHeaderFields {
                if let key = key as? String, let value = value as? String { headers[key.lowercased()] = value }
            }
            return .response(status: http.statusCode, headers: headers, body: data ?? Data())
        }
        if let error = error as? URLError, error.code == .timedOut { return .failure(.timeout) }
        return .failure(.network)
    }
}

/// A flag that lets exactly one caller through.
final class Once: Sendable {
    private let done = Mutex(false)
    func claim() -> Bool {
        done.withLock { done in
            defer { done = true }
            return !done
        }
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: TimeInterval {
        let parts = components
        return TimeInterval(parts.seconds) + TimeInterval(parts.attoseconds) / 1e18
    }
}

/// `application/x-www-form-urlencoded` and query encoding (RFC 3986 unreserved characters kept).
enum FormEncoding {
    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func escape(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? value
    }

    static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&")
    }
}
