import COpenSSL

/// Hex digests through libcrypto (tracking GUID = MD5; store keys = SHA-256).
enum Hash {
    static func md5Hex(_ text: String) -> String { digest(text, EVP_md5()) }
    static func sha256Hex(_ text: String) -> String { digest(text, EVP_sha256()) }

    private static func digest(_ text: String, _ type: OpaquePointer?) -> String {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &output, &length, type, nil)
        }
        return output.prefix(Int(length)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
