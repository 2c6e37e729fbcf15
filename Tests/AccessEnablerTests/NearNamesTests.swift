@testable import AccessEnabler
import XCTest

/// `NearNames`' bounded edit distance agrees with the full one (`Text.editDistance`) wherever the full one is
/// within the limit, and says "too far" everywhere else; and `near` picks as `closest` does.
final class NearNamesTests: XCTestCase {
    func testBoundedDistanceAgreesWithTheFullOne() {
        var generator = SplitMix64(seed: 42)
        let alphabet = Array("abcé/")
        for _ in 0..<3000 {
            let a = String((0..<Int.random(in: 0...9, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            let b = String((0..<Int.random(in: 0...9, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            let full = Text.editDistance(a, b)
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
            let closest = Text.closest(to: name, in: known)
            let expected = closest.flatMap { Text.editDistance(name.lowercased(), $0.lowercased()) <= max(1, name.count / 3) ? $0 : nil }
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
            let closest = Text.closest(to: name, in: list)
            let expected = closest.flatMap {
                Text.editDistance(name.lowercased(), $0.lowercased()) <= max(1, name.count / 3) ? $0 : nil
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
