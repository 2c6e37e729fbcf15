import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A tiny loopback HTTP/1.1 server for unit tests: records each request and answers with canned responses
/// in order (the last one repeats). One request per connection (`Connection: close`).
final class CaptureServer: @unchecked Sendable {
    struct Request {
        var method: String
        var path: String
        var headers: [String: String]
        var body: String
    }
    struct Response {
        var status: Int
        var headers: [(String, String)] = [("Content-Type", "application/json;charset=UTF-8")]
        var body: String
    }

    let port: UInt16
    private let socket: Int32
    private let state: Mutex<(requests: [Request], responses: [Response])>

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }
    var requests: [Request] { state.withLock { $0.requests } }

    init(responses: [Response]) throws {
        state = Mutex(([], responses))
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.socket = socket
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) }
        }
        guard bound == 0, listen(socket, 16) == 0 else { throw HarnessError.emulator("capture server bind") }
        withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(socket, $0, &length) }
        }
        self.port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    /// Wakes the accepting thread, which then closes the socket: closing it here could let that thread accept on
    /// a descriptor the next test reuses.
    func stop() {
        shutdown(socket, Int32(SHUT_RDWR))
    }

    private func serve() {
        while true {
            let connection = accept(socket, nil, nil)
            if connection < 0 {
                close(socket)
                return
            }
            handle(connection)
            close(connection)
        }
    }

    private func handle(_ connection: Int32) {
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var headerEnd: Int?
        var contentLength = 0
        while true {
            let count = read(connection, &buffer, buffer.count)
            if count <= 0 { return }
            data += buffer[0..<count]
            if headerEnd == nil, let range = Self.find([13, 10, 13, 10], in: data) {
                headerEnd = range
                let head = String(decoding: data[0..<range], as: UTF8.self)
                for line in head.components(separatedBy: "\r\n") where line.lowercased().hasPrefix("content-length:") {
                    contentLength = Int(line.dropFirst(15).trimmingCharacters(in: .whitespaces)) ?? 0
                }
            }
            if let end = headerEnd, data.count >= end + 4 + contentLength { break }
        }
        let end = headerEnd!
        let lines = String(decoding: data[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = lines[0].split(separator: " ")
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let request = Request(
            method: String(requestLine[0]), path: String(requestLine[1]), headers: headers,
            body: String(decoding: data[(end + 4)...], as: UTF8.self))
        let response = state.withLock { state -> Response in
            state.requests.append(request)
            return state.responses.count > 1 ? state.responses.removeFirst() : state.responses[0]
        }
        var text = "HTTP/1.1 \(response.status) X\r\nConnection: close\r\nContent-Length: \(response.body.utf8.count)\r\n"
        for (name, value) in response.headers { text += "\(name): \(value)\r\n" }
        text += "\r\n" + response.body
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for index in 0...(haystack.count - needle.count) where Array(haystack[index..<(index + needle.count)]) == needle {
            return index
        }
        return nil
    }
}
