import CCurl
import JSON
import Synchronization
#if canImport(Glibc)
    import Glibc
#endif

/// HTTP on one libcurl multi handle driven by a thread of its own. Connections stay open and are reused per
/// host (HTTP/2 multiplexed where the server offers it); TLS peers and host names are verified; redirects are
/// never followed (a 3xx comes back as it is); a request whose reused connection turns out closed is sent
/// again once on a fresh one by libcurl when no byte of the answer came back. Requests are made only on a
/// `BackendURL` (https, or http to a loopback host), so credentials never leave over plain http.
///
/// libcurl is loaded, and the handle and thread made, by the first request: a daemon that never calls the
/// backend never maps libcurl or its TLS stack. When libcurl cannot be loaded, every request fails with
/// `TransportFailure.unavailable` giving the loader's reason.
final class HTTPTransport: HTTPClient, Sendable {
    /// One multi handle (one connection pool) for every engine instance of the process.
    static let shared = HTTPTransport()

    private let pool = Mutex<Result<TransferPool, TransportFailure>?>(nil)

    /// A pool of its own, started by its first request and kept for the life of the process (tests make their own).
    init() {}

    func perform(isolation: isolated (any Actor)? = #isolation, _ request: RESTRequest, timeout: Duration) async -> HTTPResult {
        // A header line is ended by CR or LF and cut by NUL: a value holding one would add header lines of its
        // own to the request. The bridge refuses such values (-32602); this is the last guard: never sent.
        guard request.headers.allSatisfy({ HeaderValue.isSafe($0.0) && HeaderValue.isSafe($0.1) }) else { return .failure(.network) }
        // On an event loop that drives its own transfers (the daemon's), no other thread takes part.
        if let client = isolation as? RestClient, let transfers = HTTPLoops.transfers(of: client) {
            return await transfers.perform(isolation: isolation, request, timeout: timeout)
        }
        let started = pool.withLock { pool in
            if pool == nil { pool = TransferPool.start() }
            return pool!
        }
        switch started {
        case .success(let pool): return await pool.perform(isolation: isolation, request, timeout: timeout)
        case .failure(let failure): return .failure(failure)
        }
    }
}

/// The multi handle and the thread that drives it.
private final class TransferPool: @unchecked Sendable {
    /// The `CURLM *`; touched only by the pool's thread after `start`, except `ccurl_multi_wakeup`.
    private let multi: UnsafeMutableRawPointer
    /// Transfers handed over by `perform`, taken by the thread on its next turn.
    private let submitted = Mutex<[Transfer]>([])
    /// Transfers the multi handle is running, by easy handle; the thread's own.
    private var running: [UnsafeMutableRawPointer: Transfer] = [:]

    private init(multi: UnsafeMutableRawPointer) { self.multi = multi }

    /// Loads libcurl and starts the thread; `.unavailable` with the reason when libcurl cannot be loaded.
    static func start() -> Result<TransferPool, TransportFailure> {
        if let reason = ccurl_load() { return .failure(.unavailable(String(cString: reason))) }
        ccurl_global_init(Int(CURL_GLOBAL_DEFAULT))
        guard let multi = ccurl_multi_init() else { return .failure(.unavailable("curl_multi_init failed")) }
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        let pool = TransferPool(multi: multi)
        startThread(name: "http") { [pool] in pool.run() }
        return .success(pool)
    }

    func perform(isolation: isolated (any Actor)?, _ request: RESTRequest, timeout: Duration) async -> HTTPResult {
        await withCheckedContinuation(isolation: isolation) { continuation in
            guard let transfer = Transfer(request, timeout: timeout, continuation: continuation) else {
                continuation.resume(returning: .failure(.network))
                return
            }
            submitted.withLock { $0.append(transfer) }
            ccurl_multi_wakeup(multi)
        }
    }

    /// The pool's thread: adds what was submitted, drives the transfers, finishes those that ended.
    private func run() -> Never {
        while true {
            for transfer in submitted.withLock({ queue in
                defer { queue = [] }; return queue
            }) {
                running[transfer.easy] = transfer
                ccurl_multi_add_handle(multi, transfer.easy)
            }
            var active: Int32 = 0
            ccurl_multi_perform(multi, &active)
            var left: Int32 = 0
            while let message = ccurl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                    let transfer = running.removeValue(forKey: easy)
                else { continue }
                let code = message.pointee.data.result
                ccurl_multi_remove_handle(multi, easy)
                transfer.finish(code)
                ccurl_easy_cleanup(easy)
            }
            ccurl_multi_poll(multi, nil, 0, 1000, nil)
        }
    }
}

/// One request in flight: its easy handle, header list and what has come back so far. Built by the caller,
/// then touched only by the pool's thread (hence unchecked Sendable).
final class Transfer: @unchecked Sendable {
    let easy: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let continuation: CheckedContinuation<HTTPResult, Never>
    /// The response headers read so far; reset by each status line (a 100 Continue, say).
    var headers = ResponseHeaders()
    var body: [UInt8] = []

    /// A transfer on `easy` (an easy handle `curl_easy_reset` left at its defaults), or on a new one.
    init?(
        _ request: RESTRequest, timeout: Duration, continuation: CheckedContinuation<HTTPResult, Never>,
        reusing easy: UnsafeMutableRawPointer? = nil
    ) {
        guard let easy = easy ?? ccurl_easy_init() else { return nil }
        self.easy = easy
        self.continuation = continuation
        let milliseconds = max(1, Int(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000))
        _ = ccurl_setopt_string(easy, CURLOPT_URL, request.url)
        _ = ccurl_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https")
        _ = ccurl_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0)
        _ = ccurl_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        _ = ccurl_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1)
        _ = ccurl_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2)
        _ = ccurl_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = ccurl_setopt_long(easy, CURLOPT_TIMEOUT_MS, milliseconds)
        _ = ccurl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, milliseconds)
        switch (request.method.uppercased(), request.body) {
        case ("GET", nil): break
        case ("POST", let body):
            _ = ccurl_setopt_long(easy, CURLOPT_POST, 1)
            Self.setBody(easy, body ?? [])
        case (let method, let body):
            _ = ccurl_setopt_string(easy, CURLOPT_CUSTOMREQUEST, method)
            if let body { Self.setBody(easy, body) }
        }
        // Each line goes to libcurl as the bytes of name, ": ", value and a NUL, put together once.
        for (name, value) in request.headers {
            var line: [UInt8] = []
            line.reserveCapacity(name.utf8.count + value.utf8.count + 3)
            line += name.utf8
            line += ": ".utf8
            line += value.utf8
            line.append(0)
            headerList = line.withUnsafeBytes { ccurl_slist_append(headerList, $0.baseAddress!.assumingMemoryBound(to: CChar.self)) }
        }
        // "Expect:" with no value keeps libcurl from waiting for a 100 Continue before a larger body.
        headerList = ccurl_slist_append(headerList, "Expect:")
        _ = ccurl_setopt_pointer(easy, CURLOPT_HTTPHEADER, headerList)
        let context = Unmanaged.passUnretained(self).toOpaque()
        _ = ccurl_setopt_write(easy, CURLOPT_WRITEFUNCTION) { data, size, count, context in
            let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
            if let data {
                data.withMemoryRebound(to: UInt8.self, capacity: size * count) {
                    transfer.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: size * count))
                }
            }
            return size * count
        }
        _ = ccurl_setopt_pointer(easy, CURLOPT_WRITEDATA, context)
        _ = ccurl_setopt_write(easy, CURLOPT_HEADERFUNCTION) { data, size, count, context in
            let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
            transfer.header(UnsafeRawBufferPointer(start: data, count: size * count))
            return size * count
        }
        _ = ccurl_setopt_pointer(easy, CURLOPT_HEADERDATA, context)
    }

    /// The body is copied by libcurl (its size set first, so binary bytes are fine).
    private static func setBody(_ easy: UnsafeMutableRawPointer, _ body: [UInt8]) {
        _ = ccurl_setopt_long(easy, CURLOPT_POSTFIELDSIZE, body.count)
        body.withUnsafeBytes { bytes in
            _ = ccurl_setopt_pointer(easy, CURLOPT_COPYPOSTFIELDS, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1))
        }
    }

    /// One header line as libcurl hands it over (with its CRLF): the value without the spaces, tabs and line break
    /// around it, made into a `String` only for a header the client reads.
    private func header(_ line: UnsafeRawBufferPointer) {
        if line.starts(with: "HTTP/".utf8) {
            headers = ResponseHeaders()
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }
        headers.take(name: UnsafeRawBufferPointer(rebasing: line[..<colon])) {
            func blank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
            var start = colon + 1
            var end = line.count
            while start < end, blank(line[start]) { start += 1 }
            while end > start, blank(line[end - 1]) { end -= 1 }
            return String(decoding: UnsafeRawBufferPointer(rebasing: line[start..<end]), as: UTF8.self)
        }
    }

    /// Hands the result to the waiting caller; the easy handle is the caller's again, to reset for another
    /// transfer or clean up.
    func finish(_ code: CURLcode) {
        let result: HTTPResult
        switch code {
        case CURLE_OK:
            var status = 0
            _ = ccurl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
            result = .response(status: status, headers: headers, body: body)
        case CURLE_OPERATION_TIMEDOUT:
            result = .failure(.timeout)
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS:
            result = .failure(.insecure)
        default:
            result = .failure(.network)
        }
        ccurl_slist_free_all(headerList)
        continuation.resume(returning: result)
    }
}

/// What may stand in an HTTP header field value (RFC 9110, "Field Values"): no control character but tab.
public enum HeaderValue {
    /// Eight bytes at a time (`ByteWord`) up to the first word with a control character; byte by byte from there.
    public static func isSafe(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { utf8 in
            var index = 0
            if let start = utf8.baseAddress {
                while index + 8 <= utf8.count {
                    let word = UnsafeRawPointer(start).loadUnaligned(fromByteOffset: index, as: UInt64.self)
                    if ByteWord.hasByte(below: 0x20, in: word) || ByteWord.hasByte(0x7F, in: word) { break }
                    index += 8
                }
            }
            return utf8[index...].allSatisfy { $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }
        }
    }
}
