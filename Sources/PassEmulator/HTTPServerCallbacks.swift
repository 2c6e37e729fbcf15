import CMicroHTTPD
import Glibc

// libmicrohttpd callbacks. They are global functions on purpose: closures formed in main.swift would be
// MainActor-isolated and crash when called from the server's threads.

/// Request bodies larger than this close the connection (the real API takes small forms and JSON).
let maxBodyBytes = 1 << 20

/// The access handler: gathers the body across upload calls, then asks the responder and queues the answer.
func accessHandler(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ url: UnsafePointer<CChar>?,
    _ method: UnsafePointer<CChar>?, _ version: UnsafePointer<CChar>?, _ uploadData: UnsafePointer<CChar>?,
    _ uploadDataSize: UnsafeMutablePointer<Int>?, _ conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let cls, let connection, let conCls else { return .NO }
    guard let stored = conCls.pointee else {
        conCls.pointee = Unmanaged.passRetained(UploadBuffer()).toOpaque()
        return .YES
    }
    let buffer = Unmanaged<UploadBuffer>.fromOpaque(stored).takeUnretainedValue()
    if let uploadDataSize, uploadDataSize.pointee > 0 {
        guard buffer.bytes.count + uploadDataSize.pointee <= maxBodyBytes else { return .NO }
        if let uploadData {
            uploadData.withMemoryRebound(to: UInt8.self, capacity: uploadDataSize.pointee) {
                buffer.bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: uploadDataSize.pointee))
            }
        }
        uploadDataSize.pointee = 0
        return .YES
    }
    let box = Unmanaged<ResponderBox>.fromOpaque(cls).takeUnretainedValue()
    // Called again once a suspended connection is resumed: the response made before goes out now.
    if let delayed = buffer.delayed {
        buffer.delayed = nil
        return queue(delayed, on: connection)
    }
    let request = HTTPRequest(
        method: method.map { String(cString: $0) } ?? "GET",
        path: url.map { String(cString: $0) } ?? "/",
        query: connectionValues(connection, .GET_ARGUMENT_KIND),
        headers: connectionValues(connection, .HEADER_KIND),
        body: buffer.bytes)
    let response = box.responder.respond(to: request)
    if response.delay > .zero {
        buffer.delayed = response
        if box.suspended.suspend(connection, for: response.delay) { return .YES }
        buffer.delayed = nil  // the server is stopping: no wait
    }
    return queue(response, on: connection)
}

/// Releases the per-connection upload buffer when libmicrohttpd is done with the request.
func requestCompleted(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ code: MHD_RequestTerminationCode
) {
    guard let conCls, let stored = conCls.pointee else { return }
    Unmanaged<UploadBuffer>.fromOpaque(stored).release()
    conCls.pointee = nil
}

func collectPair(
    _ cls: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ key: UnsafePointer<CChar>?, _ value: UnsafePointer<CChar>?
) -> MHD_Result {
    guard let cls, let key else { return .YES }
    let collector = Unmanaged<PairCollector>.fromOpaque(cls).takeUnretainedValue()
    let name = String(cString: key)
    collector.pairs[kind == .HEADER_KIND ? name.lowercased() : name] = value.map { String(cString: $0) } ?? ""
    return .YES
}

func connectionValues(_ connection: OpaquePointer, _ kind: MHD_ValueKind) -> [String: String] {
    let collector = PairCollector()
    let unmanaged = Unmanaged.passRetained(collector)
    _ = MHD_get_connection_values(connection, kind, collectPair, unmanaged.toOpaque())
    unmanaged.release()
    return collector.pairs
}

/// Serves the first half of a body, then reports an error so the connection closes short of Content-Length.
func truncatedReader(_ cls: UnsafeMutableRawPointer?, _ position: UInt64, _ buffer: UnsafeMutablePointer<CChar>?, _ max: Int) -> Int {
    guard let cls, let buffer else { return -2 }
    let body = Unmanaged<TruncatedBody>.fromOpaque(cls).takeUnretainedValue().bytes
    let sent = body.count / 2
    let offset = Int(position)
    guard offset < sent else { return -2 }
    let count = min(max, sent - offset)
    body.withUnsafeBufferPointer { source in
        UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress! + offset, byteCount: count)
    }
    return count
}

func truncatedFree(_ cls: UnsafeMutableRawPointer?) {
    guard let cls else { return }
    Unmanaged<TruncatedBody>.fromOpaque(cls).release()
}

func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
    let made: OpaquePointer?
    switch response.delivery {
    case .drop:
        return .NO
    case .truncated:
        let box = Unmanaged.passRetained(TruncatedBody(response.body))
        made = MHD_create_response_from_callback(UInt64(response.body.count), 4096, truncatedReader, box.toOpaque(), truncatedFree)
    case .normal:
        made = response.body.withUnsafeBytes { raw in
            MHD_create_response_from_buffer(raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress), .RESPMEM_MUST_COPY)
        }
    }
    guard let made else { return .NO }
    for (name, value) in response.headers { _ = MHD_add_response_header(made, name, value) }
    let result = MHD_queue_response(connection, UInt32(response.status), made)
    MHD_destroy_response(made)
    return result
}
