@testable import AccessEnabler
import XCTest

/// `NearNames`' bounded edit distance agrees with the full one (`fullEditDistance`, the plain algorithm, kept here as the reference) wherever the full one is
/// within the limit, and says "too far" everywhere else; and `near` picks as `closest` does.
final class NearNamesTests: XCTestCase {
    func testBoundedDistanceAgreesWithTheFullOne() {
        var generator = SplitMix64(seed: 42)
        let alphabet = Array("abcé/")
        for _ in 0..<3000 {
            let a = String((0..<Int.random(in: 0...9, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            let b = String((0..<Int.random(in: 0...9, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            let full = fullEditDistance(a, b)
            for limit in 0...5 {
                let bounded = NearNames.distance(
                    a.unicodeScalars.map(\.value), b.unicodeScalars.map(\.value), atMost: limit)
                XCTAssertEqual(bounded, full <= limit ? full : nil, "\(a) / \(b) within \(limit)")
            }
        }
    }

    func testNearIsTheClosestWhenWithinAThird() {
        let known = ["getAuthorization", "getAuthentication", "checkAuthorization", "logout", "setRequestor"]
        for name in ["getAuthorisation", "GETAUTHENTICATION", "chekAuthorization", "logot", "bench/unknown", "", "x", "setRequester"] {
            let closest = referenceClosest(name, known)
            XCTAssertEqual(Text.closest(to: name, in: known), closest, name)
            let expected = closest.flatMap { fullEditDistance(name.lowercased(), $0.lowercased()) <= max(1, name.count / 3) ? $0 : nil }
            XCTAssertEqual(NearNames(known).near(name), expected, name)
        }
        // Random names against random lists: the pruning never changes the answer.
        var generator = SplitMix64(seed: 7)
        let alphabet = Array("abcdeAé/")
        func word() -> String {
            String((0..<Int.random(in: 0...8, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
        }
        for _ in 0..<2000 {
            let list = (0..<Int.random(in: 1...6, using: &generator)).map { _ in word() }
            let name = word()
            let closest = referenceClosest(name, list)
            XCTAssertEqual(Text.closest(to: name, in: list), closest, "\(name) in \(list)")
            let expected = closest.flatMap {
                fullEditDistance(name.lowercased(), $0.lowercased()) <= max(1, name.count / 3) ? $0 : nil
            }
            XCTAssertEqual(NearNames(list).near(name), expected, "\(name) in \(list)")
        }
    }
}

/// A small deterministic generator (SplitMix64), so that the cases are the same on every run.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Levenshtein distance between `a` and `b` by the plain algorithm over characters (insertions, deletions and
/// substitutions), the reference the bounded one is checked against.
func fullEditDistance(_ a: String, _ b: String) -> Int {
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

/// The name of `known` nearest to `name` by `fullEditDistance`, ignoring case, the first on a tie.
func referenceClosest(_ name: String, _ known: [String]) -> String? {
    known.min { fullEditDistance(name.lowercased(), $0.lowercased()) < fullEditDistance(name.lowercased(), $1.lowercased()) }
}
