import AccessEnabler
import JSON
import JSONRPC

/// The param names each host→daemon method takes, as `Protocol/openrpc.json` lists them; a name
/// outside them is refused with -32602 naming it and the known name near it, else the names the method takes
/// (Protocol/README.md "Errors").
/// Every method is closed, `setOptions` included: its keys are `Options.stringKeys` and `Options.boolKeys`, which
/// the document lists as its params (BridgeTests check that both agree).
enum ParamNames {
    /// Method name → its param names, as listed in the OpenRPC document (daemon-to-host entries left out).
    static let byMethod: [String: [String]] = OpenRPC.paramNames

    /// Throws -32602 for the first param of `params` (in name order) that `method` does not take.
    static func refuseUnknown(_ params: Params, method: String) throws(ErrorObject) {
        let known = byMethod[method] ?? []
        // Names are compared by their UTF-8, not by `String`'s canonical equivalence: "public\u{212A}ey" (a Kelvin
        // sign) is another member than "publicKey" (Protocol/README.md, "What counts as JSON").
        for name in params.object.keys.sorted() where !known.contains(where: { $0.utf8.elementsEqual(name.utf8) }) {
            // A name only when a typo could have made this one (the rule of methods, `Text.near`): the closest of
            // all, however far, sent a new user from 'foo' to 'secret'; and the edit distance to a name of megabytes
            // held the connection's loop, and every connection on it, for seconds.
            guard let closest = Text.near(name, in: known) else {
                let takes = known.isEmpty ? ", which takes none" : " (it takes \(known.sorted().joined(separator: ", ")))"
                throw Params.invalid(name, "is not a param of \(method)" + takes)
            }
            let reason = "is not a param of \(method); did you mean '\(closest)'?"
            throw ErrorObject(
                code: .invalidParams, message: "Invalid params: '\(Text.excerpt(name))' \(reason)",
                data: ["param": .string(name), "reason": .string(reason), "closest": .string(closest)])
        }
    }
}
