import Foundation
import JSON
import XCTest

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A running `pass-emulator` child process (Sources/PassEmulator/README.md), found next to the test bundle.
final class EmulatorProcess: @unchecked Sendable {
    let process = Process()
    let baseURL: URL
    private let output = Pipe()

    /// The folder holding the built products (the .xctest bundle's folder).
    static var productsDirectory: URL {
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent()
        }
        return Bundle.main.bundleURL
    }

    /// `pass-emulator` next to the test bundle, or `$PASS_EMULATOR` when set.
    static var executable: URL {
        if let path = ProcessInfo.processInfo.environment["PASS_EMULATOR"] { return URL(fileURLWithPath: path) }
        return productsDirectory.appendingPathComponent("pass-emulator")
    }

    /// Tests/emulator-key.pem, the throwaway key the test suites' emulators sign with. Making a 2048-bit key at each
    /// start was most of the XCTests' CPU: 41.6 s for all of them with a new key per emulator, 10.5 s with this one.
    static let keyFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("emulator-key.pem").path

    /// Starts the emulator with `arguments`; it signs with ``keyFile`` unless `PASS_EMULATOR_KEY_FILE` is already set.
    init(arguments: [String] = []) throws {
        process.executableURL = Self.executable
        process.arguments = ["--port", "0"] + arguments
        var environment = ProcessInfo.processInfo.environment
        if environment["PASS_EMULATOR_KEY_FILE", default: ""].isEmpty { environment["PASS_EMULATOR_KEY_FILE"] = Self.keyFile }
        process.environment = environment
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = [UInt8]()
        let handle = output.fileHandleForReading
        while true {
            let byte = handle.readData(ofLength: 1)
            guard let first = byte.first else { break }
            if first == UInt8(ascii: "\n") { break }
            line.append(first)
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespaces)
        guard let url = URL(string: text), text.hasPrefix("http://127.0.0.1:") else {
            process.terminate()
            throw HarnessError.emulator("unexpected first line: \(text)")
        }
        baseURL = url
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    deinit { stop() }

    // MARK: admin (Sources/PassEmulator/README.md)

    func advanceClock(seconds: Int64) async throws {
        try await admin("POST", "/__admin/clock", ["advanceSeconds": .integer(seconds)])
    }

    func reset() async throws { try await admin("POST", "/__admin/reset", [:]) }

    func fault(method: String, path: String, kind: String, value: JSON? = nil, count: Int? = nil, skip: Int? = nil) async throws {
        var body: JSONObject = ["method": .string(method), "path": .string(path), "kind": .string(kind)]
        if let value { body["value"] = value }
        if let count { body["count"] = .integer(Int64(count)) }
        if let skip { body["skip"] = .integer(Int64(skip)) }
        try await admin("POST", "/__admin/faults", body)
    }

    func clearFaults() async throws { try await admin("DELETE", "/__admin/faults", nil) }

    /// `GET /__admin/requests`: the REST calls the emulator received, oldest first.
    func requests() async throws -> [JSON] {
        let (data, _) = try await Browser.session.data(from: baseURL.appendingPathComponent("__admin/requests"))
        return try JSON.parse([UInt8](data))["requests"]?.arrayValue ?? []
    }

    /// `POST /__admin/{name}` of the emulator's rules (`limits`, `degradation`, `item-errors`).
    func rule(_ name: String, _ body: JSONObject) async throws { try await admin("POST", "/__admin/\(name)", body) }

    /// Switches `mvpd`'s platform services (single sign-on) under `serviceProvider` off or back on.
    func platformServices(_ serviceProvider: String, mvpd: String, enabled: Bool) async throws {
        try await admin(
            "POST", "/__admin/platform-services",
            ["serviceProvider": .string(serviceProvider), "mvpd": .string(mvpd), "enablePlatformServices": .bool(enabled)])
    }

    private func admin(_ method: String, _ path: String, _ body: JSONObject?) async throws {
        var request = URLRequest(url: baseURL.appendingPathComponent(String(path.dropFirst())))
        request.httpMethod = method
        if let body {
            request.httpBody = Data(JSON.object(body).serialized())
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (_, response) = try await Browser.session.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else { throw HarnessError.emulator("\(method) \(path) → \(status)") }
    }

    /// Runs `pass-emulator verify-token TOKEN --resource R --url BASE`; returns the exit status and output.
    func verifyToken(_ token: String, resource: String?) throws -> (status: Int32, output: String) {
        let verifier = Process()
        verifier.executableURL = Self.executable
        verifier.arguments = ["verify-token", token] + (resource.map { ["--resource", $0] } ?? []) + ["--url", baseURL.absoluteString]
        let pipe = Pipe()
        verifier.standardOutput = pipe
        verifier.standardError = pipe
        try verifier.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        verifier.waitUntilExit()
        return (verifier.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

enum HarnessError: Error {
    case emulator(String)
    case browser(String)
}

/// A plain HTTP client standing in for the web view / the second-screen browser: follows redirects itself,
/// submits the forms it finds with the values given, and stops at the app's redirect URL.
final class Browser: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        return URLSession(configuration: configuration)
    }()

    private lazy var session = URLSession(configuration: Self.noCookies, delegate: self, delegateQueue: nil)
    private var cookies: [String: String] = [:]
    let redirectURL: String

    private static var noCookies: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        return configuration
    }

    init(redirectURL: String = "adobepass://ios.app") { self.redirectURL = redirectURL }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    enum End: Equatable {
        case redirected(String)
        case page(Int, String)
    }

    /// Opens `url` and walks through redirects and forms, filling fields from `fields` (matched by exact
    /// name, or by `code`/`mvpd`/`provider` appearing in the name). Stops at the redirect URL or at a page
    /// without a form.
    func open(_ url: String, fields: [String: String]) async throws -> End {
        var request = URLRequest(url: URL(string: url)!)
        var submitted = 0
        for _ in 0..<20 {
            let (data, response) = try await fetch(request)
            let status = response.statusCode
            let body = String(decoding: data, as: UTF8.self)
            if (300..<400).contains(status), let location = response.value(forHTTPHeaderField: "Location") {
                let target = URL(string: location, relativeTo: request.url)?.absoluteString ?? location
                if target.hasPrefix(redirectURL) || !(target.hasPrefix("http://") || target.hasPrefix("https://")) {
                    return .redirected(target)
                }
                request = URLRequest(url: URL(string: target)!)
                continue
            }
            guard status == 200, let form = HTMLForm.first(in: body), submitted < 6 else { return .page(status, body) }
            submitted += 1
            let action = URL(string: form.action.isEmpty ? request.url!.absoluteString : form.action, relativeTo: request.url)!
            let values = form.fields.map { field -> (String, String) in
                (field.name, Self.value(for: field.name, fields: fields) ?? field.value)
            }
            let encoded = values.map { "\(Self.escape($0.0))=\(Self.escape($0.1))" }.joined(separator: "&")
            if form.method == "GET" {
                var components = URLComponents(url: action, resolvingAgainstBaseURL: true)!
                components.percentEncodedQuery = encoded
                request = URLRequest(url: components.url!)
            } else {
                request = URLRequest(url: action.absoluteURL)
                request.httpMethod = "POST"
                request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
                request.httpBody = Data(encoded.utf8)
            }
        }
        throw HarnessError.browser("too many steps")
    }

    private static func value(for name: String, fields: [String: String]) -> String? {
        if let exact = fields[name] { return exact }
        let lower = name.lowercased()
        if lower.contains("code"), let code = fields["code"] { return code }
        if lower.contains("mvpd") || lower.contains("provider") { return fields["mvpd"] }
        return nil
    }

    private static func escape(_ text: String) -> String {
        text.addingPercentEncoding(
            withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")) ?? text
    }

    private func fetch(_ original: URLRequest) async throws -> (Data, HTTPURLResponse) {
        var request = original
        if !cookies.isEmpty {
            request.setValue(cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; "), forHTTPHeaderField: "Cookie")
        }
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw HarnessError.browser("no HTTP response") }
        if let setCookie = http.value(forHTTPHeaderField: "Set-Cookie") {
            for part in setCookie.components(separatedBy: ",") {
                let pair = part.components(separatedBy: ";")[0].components(separatedBy: "=")
                if pair.count >= 2 { cookies[pair[0].trimmingCharacters(in: .whitespaces)] = pair.dropFirst().joined(separator: "=") }
            }
        }
        return (data, http)
    }
}

/// The first `<form>` of a page with its fields (inputs with a name, selects with their first option).
struct HTMLForm {
    var action: String
    var method: String
    var fields: [(name: String, value: String)]

    static func first(in html: String) -> HTMLForm? {
        guard let formStart = html.range(of: "<form", options: .caseInsensitive) else { return nil }
        let rest = html[formStart.lowerBound...]
        let formEnd = rest.range(of: "</form>", options: .caseInsensitive)?.upperBound ?? rest.endIndex
        let formHTML = String(rest[..<formEnd])
        let openTag = String(formHTML[..<(formHTML.firstIndex(of: ">") ?? formHTML.endIndex)])
        var form = HTMLForm(
            action: attribute("action", in: openTag) ?? "", method: (attribute("method", in: openTag) ?? "GET").uppercased(), fields: [])
        for tag in tags(named: "input", in: formHTML) {
            guard let name = attribute("name", in: tag) else { continue }
            let type = attribute("type", in: tag)?.lowercased() ?? "text"
            if type == "submit" || type == "button" { continue }
            form.fields.append((name, attribute("value", in: tag) ?? ""))
        }
        for tag in tags(named: "select", in: formHTML) {
            guard let name = attribute("name", in: tag) else { continue }
            form.fields.append((name, ""))
        }
        return form
    }

    private static func tags(named name: String, in html: String) -> [String] {
        var result: [String] = []
        var search = html.startIndex
        while let start = html.range(of: "<" + name, options: .caseInsensitive, range: search..<html.endIndex) {
            let end = html[start.upperBound...].firstIndex(of: ">") ?? html.endIndex
            result.append(String(html[start.lowerBound..<end]))
            search = end
        }
        return result
    }

    static func attribute(_ name: String, in tag: String) -> String? {
        for quote in ["\"", "'"] {
            let pattern = " " + name + "=" + quote
            if let start = tag.range(of: pattern, options: .caseInsensitive) {
                let rest = tag[start.upperBound...]
                guard let end = rest.firstIndex(of: Character(quote)) else { return nil }
                return String(rest[..<end]).replacingOccurrences(of: "&amp;", with: "&").replacingOccurrences(of: "&quot;", with: "\"")
            }
        }
        return nil
    }
}
