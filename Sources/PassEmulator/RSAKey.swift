import COpenSSL
import Foundation

/// An RSA key pair (or public key alone) in libcrypto, used for RSA-SHA256 signatures on media tokens
/// and mock SAML responses.
public final class RSAKey: @unchecked Sendable {
    private let key: OpaquePointer
    /// Whether the private half is present.
    public let canSign: Bool

    private init(key: OpaquePointer, canSign: Bool) {
        self.key = key
        self.canSign = canSign
    }

    deinit { EVP_PKEY_free(key) }

    /// A fresh 2048-bit key pair.
    public static func generate() -> RSAKey? {
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_RSA, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_rsa_keygen_bits(context, 2048) == 1 else { return nil }
        var made: OpaquePointer?
        guard EVP_PKEY_generate(context, &made) == 1, let made else { return nil }
        return RSAKey(key: made, canSign: true)
    }

    /// A private key from PEM text (PKCS#1 or PKCS#8).
    public static func privateKey(pem: String) -> RSAKey? {
        withBIO(pem) { bio in PEM_read_bio_PrivateKey(bio, nil, nil, nil) }.map { RSAKey(key: $0, canSign: true) }
    }

    /// A public key from PEM text (`BEGIN PUBLIC KEY`).
    public static func publicKey(pem: String) -> RSAKey? {
        withBIO(pem) { bio in PEM_read_bio_PUBKEY(bio, nil, nil, nil) }.map { RSAKey(key: $0, canSign: false) }
    }

    private static func withBIO(_ pem: String, _ body: (OpaquePointer) -> OpaquePointer?) -> OpaquePointer? {
        let bytes = Array(pem.utf8)
        return bytes.withUnsafeBytes { raw -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return body(bio)
        }
    }

    /// The public half as PEM (`-----BEGIN PUBLIC KEY-----`).
    public var publicKeyPEM: String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        PEM_write_bio_PUBKEY(bio, key)
        var pointer: UnsafeMutablePointer<CChar>?
        let length = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &pointer)
        guard let pointer, length > 0 else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: pointer, count: Int(length)), as: UTF8.self)
    }

    /// The RSA-SHA256 (PKCS#1 v1.5) signature of `message`, or nil without a private key.
    public func sign(_ message: [UInt8]) -> [UInt8]? {
        guard canSign, let context = EVP_MD_CTX_new() else { return nil }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else { return nil }
        var length = 0
        let ok = message.withUnsafeBufferPointer { EVP_DigestSign(context, nil, &length, $0.baseAddress, $0.count) }
        guard ok == 1 else { return nil }
        var signature = [UInt8](repeating: 0, count: length)
        let signed = message.withUnsafeBufferPointer { input in
            signature.withUnsafeMutableBufferPointer { EVP_DigestSign(context, $0.baseAddress, &length, input.baseAddress, input.count) }
        }
        guard signed == 1 else { return nil }
        return Array(signature.prefix(length))
    }

    /// Whether `signature` is a valid RSA-SHA256 signature of `message` under this key.
    public func verify(_ message: [UInt8], signature: [UInt8]) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { return false }
        let result = message.withUnsafeBufferPointer { input in
            signature.withUnsafeBufferPointer { EVP_DigestVerify(context, $0.baseAddress, $0.count, input.baseAddress, input.count) }
        }
        return result == 1
    }
}

/// SHA-256 helpers over libcrypto.
enum Digest {
    static func sha256Hex(_ text: String) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        let bytes = Array(text.utf8)
        var length: UInt32 = 0
        _ = bytes.withUnsafeBufferPointer { EVP_Digest($0.baseAddress, $0.count, &digest, &length, EVP_sha256(), nil) }
        return hex(digest)
    }

    /// Lower-case hex of `bytes`.
    static func hex(_ bytes: [UInt8]) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { text in
            let digits: StaticString = "0123456789abcdef"
            for (index, byte) in bytes.enumerated() {
                text[2 * index] = digits.utf8Start[Int(byte >> 4)]
                text[2 * index + 1] = digits.utf8Start[Int(byte & 0xF)]
            }
            return bytes.count * 2
        }
    }
}

/// Whitespace trimmed as Foundation's `trimmingCharacters(in:)` trims it, without Foundation for the ASCII text of
/// headers (per request); other text goes to Foundation.
enum Trim {
    /// `.whitespaces` (`newlines` false: space and tab in ASCII) or `.whitespacesAndNewlines` (also LF, VT, FF, CR).
    static func whitespace(_ text: String, newlines: Bool = false) -> String {
        guard text.utf8.allSatisfy({ $0 < 0x80 }) else {
            return text.trimmingCharacters(in: newlines ? .whitespacesAndNewlines : .whitespaces)
        }
        func blank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || (newlines && byte >= 0x0A && byte <= 0x0D) }
        let bytes = Array(text.utf8)
        guard let first = bytes.firstIndex(where: { !blank($0) }), let last = bytes.lastIndex(where: { !blank($0) }) else { return "" }
        return first == 0 && last == bytes.count - 1 ? text : String(decoding: bytes[first...last], as: UTF8.self)
    }
}
