extension StringProtocol {
    /// The text without leading and trailing whitespace (Unicode's: spaces, tabs, line breaks).
    public func trimmingWhitespace() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(self[first...last])
    }
}

/// Path text as the shell and POSIX see it.
public enum FilePath {
    /// `/a/b/c` → `/a/b`, `/a` → `/`, `c` → `""` (trailing slashes ignored).
    public static func parent(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }
}

/// Names close to a misspelled one: the suggestion in "did you mean …?" answers.
public enum Text {
    /// The name of `known` nearest to `name` by edit distance, ignoring case (the first on a tie); nil when
    /// `known` is empty or the nearest is more than `within` edits away.
    public static func closest(to name: String, in known: [String], within: Int = .max) -> String? {
        let target = name.lowercased()
        let ranked = known.map { ($0, editDistance(target, $0.lowercased())) }
        guard let best = ranked.min(by: { $0.1 < $1.1 }), best.1 <= within else { return nil }
        return best.0
    }

    /// The name of `known` nearest to `name` when it is near: ignoring case, at most a third of `name`'s
    /// characters (at least one) inserted, deleted or replaced. The rule for names suggested without being asked
    /// about a known list: a method (-32601) and an MVPD id the provider dialog did not offer (PB404);
    /// Protocol/README.md "Errors".
    public static func near(_ name: String, in known: [String]) -> String? {
        closest(to: name, in: known, within: max(1, name.count / 3))
    }

    /// Levenshtein distance between `a` and `b` (insertions, deletions and substitutions of characters).
    public static func editDistance(_ a: String, _ b: String) -> Int {
        let b = Array(b)
        var previous = Array(0...b.count)
        for (i, character) in a.enumerated() {
            var current = [i + 1]
            for j in b.indices {
                current.append(Swift.min(previous[j + 1] + 1, current[j] + 1, previous[j] + (character == b[j] ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
}
