import JSON
import JSONRPC

/// The param names each host→daemon method takes, as `Protocol/openrpc.json` lists them; a name
/// outside them is refused with -32602 naming it and the closest known name (Protocol/README.md "Errors").
enum ParamNames {
    /// Methods whose params are an open dictionary in the SDK: any name is passed on.
    static let open: Set<String> = ["setOptions"]

    /// Method name → its param names, as listed in the OpenRPC document (daemon-to-host entries left out).
    static let byMethod: [String: [String]] = OpenRPC.paramNames

    /// Throws -32602 for the first param of `params` (in name order) that `method` does not take.
    static func refuseUnknown(_ params: Params, method: String) throws(ErrorObject) {
        guard !open.contains(method) else { return }
        let known = byMethod[method] ?? []
        for name in params.object.keys.sorted() where !known.contains(name) {
            guard let closest = closest(to: name, in: known) else {
                throw Params.invalid(name, "is not a param of \(method), which takes none")
            }
            let reason = "is not a param of \(method); did you mean '\(closest)'?"
            throw ErrorObject(
                code: .invalidParams, message: "Invalid params: '\(name)' \(reason)",
                data: ["param": .string(name), "reason": .string(reason), "closest": .string(closest)])
        }
    }

    /// The known name nearest to `name` by edit distance, ignoring case (the first on a tie); nil when none.
    static func closest(to name: String, in known: [String]) -> String? {
        known.min { editDistance(name.lowercased(), $0.lowercased()) < editDistance(name.lowercased(), $1.lowercased()) }
    }

    /// The known name nearest to `name` (as ``closest(to:in:)``) when it is close: ignoring case, at most a third of
    /// `name`'s characters (at least one) must be inserted, deleted or replaced to reach it; nil otherwise. The rule
    /// for the names the daemon suggests without being asked about a known list: a method (-32601) and an MVPD id the
    /// provider dialog did not offer (PB404); Protocol/README.md "Errors".
    static func near(_ name: String, in known: [String]) -> String? {
        guard let closest = closest(to: name, in: known) else { return nil }
        let distance = editDistance(name.lowercased(), closest.lowercased())
        return distance <= Swift.max(1, name.count / 3) ? closest : nil
    }

    /// Levenshtein distance between `a` and `b` (insertions, deletions and substitutions of characters).
    static func editDistance(_ a: String, _ b: String) -> Int {
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
