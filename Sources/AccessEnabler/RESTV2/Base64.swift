import CDigest

/// Base64 with padding and no line breaks (RFC 4648, section 4), through libcrypto's EVP_EncodeBlock and
/// EVP_DecodeBlock (loaded as by `Hash`): the `X-Device-Info`, `AP-Device-Identifier`, `AP-TempPass-Identity`
/// and `AP-Partner-Framework-Status` headers, and `init`'s `deviceInfo`.
public enum Base64 {
    /// `bytes` in base64: 4 characters for every 3 bytes or part of them.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        requireLibcrypto()
        let input = Array(bytes)
        let capacity = 4 * ((input.count + 2) / 3)
        return String(unsafeUninitializedCapacity: capacity + 1) { text in
            input.withUnsafeBytes { cdigest_base64_encode($0.baseAddress, $0.count, text.baseAddress) }
        }
    }

    /// The bytes `text` encodes; nil unless it is padded base64 of the standard alphabet, with no white space.
    public static func decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 4 == 0,
            characters.allSatisfy({ $0 >= 0x21 && $0 < 0x7F })  // EVP_DecodeBlock would skip white space
        else { return nil }
        if characters.isEmpty { return [] }
        requireLibcrypto()
        var bytes = [UInt8](repeating: 0, count: characters.count / 4 * 3)
        let written = characters.withUnsafeBufferPointer { input in
            bytes.withUnsafeMutableBytes { output in
                input.withMemoryRebound(to: CChar.self) { cdigest_base64_decode($0.baseAddress, $0.count, output.baseAddress) }
            }
        }
        let padding = characters.reversed().prefix(while: { $0 == UInt8(ascii: "=") }).count
        // "=" belongs only at the end, at most two, and EVP_DecodeBlock counts its zero bytes.
        guard written == bytes.count, padding <= 2,
            !characters.dropLast(padding).contains(UInt8(ascii: "="))
        else { return nil }
        bytes.removeLast(padding)
        return bytes
    }
}
