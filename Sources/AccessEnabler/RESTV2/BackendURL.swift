import FoundationEssentials

/// The one rule for which backend URLs may be used (the command line's `--backend` and setRequestor's
/// `serviceProviders` alike): https anywhere, plain http only on a loopback host.
public enum BackendURL {
    /// `localhost`, `::1` (bracketed or not) or any IPv4 address in 127.0.0.0/8, case-insensitive.
    public static func isLoopback(_ host: String) -> Bool {
        var bare = Substring(host.lowercased())
        while bare.first == "[" { bare.removeFirst() }
        while bare.last == "]" { bare.removeLast() }
        if bare == "localhost" || bare == "::1" { return true }
        let octets = bare.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    /// https with a host, or http with a loopback host.
    public static func isAllowed(_ url: URL) -> Bool {
        guard let host = url.host, !host.isEmpty else { return false }
        switch url.scheme?.lowercased() {
        case "https": return true
        case "http": return isLoopback(host)
        default: return false
        }
    }
}
