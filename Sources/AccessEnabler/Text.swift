extension StringProtocol {
    /// The text without leading and trailing whitespace (Unicode's: spaces, tabs, line breaks).
    public func trimmingWhitespace() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(self[first...last])
    }
}

/// Searches of ASCII text in UTF-8 bytes, for header values and paths (Unicode's comparisons cost a hundred
/// times more, and these texts are compared on every backend call).
enum ASCII {
    /// Whether `needle` (lower-case ASCII) occurs in `text`, ignoring ASCII case.
    static func contains(_ text: String, _ needle: StaticString) -> Bool {
        let count = needle.utf8CodeUnitCount
        let bytes = Array(text.utf8)
        guard bytes.count >= count else { return false }
        outer: for start in 0...(bytes.count - count) {
            for index in 0..<count {
                let byte = bytes[start + index]
                let lower = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
                if lower != needle.utf8Start[index] { continue outer }
            }
            return true
        }
        return false
    }

    /// The position just after the first occurrence of `needle` in `text` (exact bytes), if any.
    static func end(of needle: StaticString, in text: String) -> String.UTF8View.Index? {
        let count = needle.utf8CodeUnitCount
        let utf8 = text.utf8
        var start = utf8.startIndex
        while let end = utf8.index(start, offsetBy: count, limitedBy: utf8.endIndex) {
            if utf8[start..<end].elementsEqual(UnsafeBufferPointer(start: needle.utf8Start, count: count)) { return end }
            start = utf8.index(after: start)
        }
        return nil
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
    /// `text` as an answer quotes it: whole up to 64 characters, else its first 64 and "…" (a host's bad input
    /// can be megabytes long); at most 256 bytes of UTF-8 either way, cut between Unicode scalars when one
    /// character holds more (`a` and 5,000 combining accents is one character).
    public static func excerpt(_ text: String) -> String {
        let prefix = text.prefix(64)
        if prefix.utf8.count <= 256 { return prefix.endIndex == text.endIndex ? text : String(prefix) + "…" }
        var kept = String.UnicodeScalarView()
        var bytes = 0
        for scalar in text.unicodeScalars {
            bytes += UTF8.width(scalar)
            if bytes > 256 { break }
            kept.append(scalar)
        }
        return String(kept) + "…"
    }

    /// The name of `known` nearest to `name` by edit distance, ignoring case (the first on a tie); nil when
    /// `known` is empty or the nearest is more than `within` edits away.
    public static func closest(to name: String, in known: [String], within: Int = .max) -> String? {
        NearNames(known).closest(to: name, within: within)
    }

    /// The name of `known` nearest to `name` when it is near: ignoring case, at most a third of `name`'s
    /// characters (at least one) inserted, deleted or replaced. The rule for names suggested without being asked
    /// about a known list: a method (-32601) and an MVPD id the provider dialog did not offer (PB404);
    /// Protocol/README.md "Errors".
    public static func near(_ name: String, in known: [String]) -> String? {
        NearNames(known).near(name)
    }
}

/// Names prepared for `Text.near`: lowercased once, then compared by an edit distance bounded by the limit, so
/// that a suggestion costs little even when it is made for every unknown method a host sends. A candidate is
/// skipped when its length, or a count of its characters by class (each insertion, deletion or replacement
/// changes that count by at most one either way), already puts it too far; for the others only the cells within
/// the limit of the diagonal are computed, and a comparison stops once every path is too far.
public struct NearNames: Sendable {
    private struct Name: Sendable {
        let name: String
        let scalars: [UInt32]
        /// How many of its characters fall in each of 32 classes (`classes(_:)`).
        let classes: [Int16]
    }
    private let names: [Name]
    private let longest: Int
    /// The longest name, in bytes, that a suggestion is looked for (a host's typo is never longer).
    public static let longestAsked = 256

    public init(_ names: [String]) {
        self.names = names.map { name in
            let scalars = Self.folded(name)
            return Name(name: name, scalars: scalars, classes: Self.classes(scalars))
        }
        longest = self.names.map(\.scalars.count).max() ?? 0
    }

    private static func folded(_ text: String) -> [UInt32] { text.lowercased().unicodeScalars.map(\.value) }

    /// How many characters fall in each of 32 classes (the scalar value modulo 32).
    private static func classes(_ scalars: [UInt32]) -> [Int16] {
        var counts = [Int16](repeating: 0, count: 32)
        for scalar in scalars { counts[Int(scalar & 31)] &+= 1 }
        return counts
    }

    /// A lower bound of the edit distance between texts with these class counts.
    private static func bound(_ a: [Int16], _ b: [Int16]) -> Int {
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                var more = 0
                var fewer = 0
                for index in 0..<32 {
                    let difference = Int(a[index]) - Int(b[index])
                    if difference > 0 { more += difference } else { fewer -= difference }
                }
                return max(more, fewer)
            }
        }
    }

    /// As `Text.near(_:in:)`: the first name at the smallest distance, when that distance is at most a third of
    /// `name`'s characters (at least one). A name of more than `NearNames.longestAsked` bytes gets none, at once.
    public func near(_ name: String) -> String? {
        guard name.utf8.count <= Self.longestAsked else { return nil }
        return closest(to: name, within: max(1, name.count / 3))
    }

    /// As `Text.closest(to:in:within:)`: the first name at the smallest distance (in Unicode scalars, ignoring
    /// case), when it is at most `within`.
    public func closest(to name: String, within: Int) -> String? {
        let target = Self.folded(name)
        // No distance is more than the longer text's length, so a larger limit changes nothing.
        var limit = min(within, max(target.count, longest))
        guard target.count <= longest + limit else { return nil }
        let classes = Self.classes(target)
        var best: (name: String, distance: Int)?
        for candidate in names
        where abs(candidate.scalars.count - target.count) <= limit && Self.bound(classes, candidate.classes) <= limit {
            guard let distance = Self.distance(target, candidate.scalars, atMost: limit) else { continue }
            if best == nil || distance < best!.distance {
                best = (candidate.name, distance)
                if distance == 0 { break }
                limit = distance - 1
            }
        }
        return best?.name
    }

    /// The edit distance between `a` and `b`, or nil when it is more than `limit` (Levenshtein, computed only in
    /// the band of cells within `limit` of the diagonal; the others are more than `limit` anyway).
    static func distance(_ a: [UInt32], _ b: [UInt32], atMost limit: Int) -> Int? {
        if abs(a.count - b.count) > limit { return nil }
        let far = limit + 1
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: 2 * (b.count + 1)) { rows in
            var previous = UnsafeMutableBufferPointer(rebasing: rows[0...b.count])
            var current = UnsafeMutableBufferPointer(rebasing: rows[(b.count + 1)...])
            for j in 0...b.count { previous[j] = j <= limit ? j : far }
            for j in 0...b.count { current[j] = far }
            for i in stride(from: 1, through: a.count, by: 1) {
                let low = max(1, i - limit)
                let high = min(b.count, i + limit)
                current[low - 1] = low == 1 && i <= limit ? i : far
                var rowMinimum = current[low - 1]
                if low <= high {
                    for j in low...high {
                        let cost = a[i - 1] == b[j - 1] ? 0 : 1
                        let value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost, far)
                        current[j] = value
                        rowMinimum = min(rowMinimum, value)
                    }
                }
                if high < b.count { current[high + 1] = far }
                if rowMinimum > limit { return nil }
                swap(&previous, &current)
            }
            return previous[b.count] <= limit ? previous[b.count] : nil
        }
    }
}

/// The SDK's date string of a token expiry, `yyyy/MM/dd HH:mm:ss zzz Z` in GMT (`2026/12/01 18:45:00 GMT +0000`):
/// the form the AccessEnabler SDK's getMetadata answered with (Protocol/README.md, "Values").
public enum SDKDate {
    /// `millis`: epoch milliseconds.
    public static func format(millis: Int64) -> String {
        let seconds = millis >= 0 ? millis / 1000 : (millis - 999) / 1000
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let time = seconds - days * 86_400
        // Civil date from days since 1970-01-01 (the proleptic Gregorian calendar; Howard Hinnant's algorithm).
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)/\(two(month))/\(two(day)) \(two(time / 3600)):\(two(time / 60 % 60)):\(two(time % 60)) GMT +0000"
    }
}
