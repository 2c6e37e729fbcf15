import CDigest
import Synchronization

/// Hex digests through libcrypto (tracking GUID = MD5; store keys = SHA-256), loaded by the first one.
///
/// libcrypto is a dependency of libcurl as well, so a machine without it cannot reach the backend at all; a
/// digest there stops the process with the loader's reason, as a missing start-up library would.
enum Hash {
    static func md5Hex(_ text: String) -> String { hex(text, count: 16, cdigest_md5) }
    static func sha256Hex(_ text: String) -> String { hex(text, count: 32, cdigest_sha256) }

    private static func hex(
        _ text: String, count: Int, _ digest: (UnsafeRawPointer?, Int, UnsafeMutablePointer<UInt8>?) -> Int32
    ) -> String {
        requireLibcrypto()
        var output = [UInt8](repeating: 0, count: count)
        let bytes = Array(text.utf8)
        let done = bytes.withUnsafeBytes { input in digest(input.baseAddress, input.count, &output) }
        precondition(done == 1, "libcrypto's EVP_Digest failed")
        return String(unsafeUninitializedCapacity: count * 2) { text in
            let digits: StaticString = "0123456789abcdef"
            for (index, byte) in output.enumerated() {
                text[2 * index] = digits.utf8Start[Int(byte >> 4)]
                text[2 * index + 1] = digits.utf8Start[Int(byte & 0xF)]
            }
            return count * 2
        }
    }

    private static let statementHashes = Mutex<[String: String]>([:])

    /// `sha256Hex` of a software statement, remembered: a process has one or two, and their hash keys every store
    /// call (`RestClient.scope`).
    static func statementSHA256(_ statement: String) -> String {
        if let known = statementHashes.withLock({ $0[statement] }) { return known }
        let hash = sha256Hex(statement)
        statementHashes.withLock { known in
            if known.count >= 16 { known.removeAll() }  // statements a host made up do not pile up
            known[statement] = hash
        }
        return hash
    }
}

/// Loads libcrypto (`cdigest_load`) or stops the process with the loader's reason (see `Hash`).
func requireLibcrypto() {
    if let reason = cdigest_load() { fatalError("libcrypto could not be loaded: \(String(cString: reason))") }
}
