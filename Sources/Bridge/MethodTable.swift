import AccessEnabler
import JSON
import JSONRPC
import Synchronization

/// What a host→daemon method does once its params are valid.
enum Operation: Sendable {
    /// Answered at once on the reader thread (never queued): init, setOptions, getSelectedProvider, rpc.discover.
    case now(JSON)
    /// Answered at once with a result that is already compact JSON text (rpc.discover's document).
    case nowEncoded([UInt8])
    /// An engine call, answered with its value when the operation ends, after its notifications.
    case engine(@Sendable (any AccessEnabler) async throws(ErrorObject) -> JSON)
    /// An engine call that answers before it ends, through the function it is given (setRequestor: before the
    /// calls it held go on, so that their notifications follow its response).
    case engineAnsweringEarly(@Sendable (any AccessEnabler, _ answer: @escaping @Sendable (JSON) -> Void) async -> Void)
}

/// One row of the method table: the method's name, whether it needs a prior setRequestor (-32002), and the
/// step that validates its params (-32602) and returns what to run. For a method that needs a requestor, `prepare`
/// must not act (it runs before the -32002 check): its work goes in the `.engine` closure it returns.
struct MethodSpec: Sendable {
    let name: String
    let needsRequestor: Bool
    let prepare: @Sendable (ApplicationInstance, Params) throws(ErrorObject) -> Operation
}

/// Every host→daemon method the daemon serves (Protocol/README.md); `Protocol/openrpc.json` lists the same
/// names, which BridgeTests checks both ways.
enum MethodTable {
    static let all: [MethodSpec] =
        LifecycleMethods.all + AuthenticationMethods.all + AuthorizationMethods.all + MetadataMethods.all
        + [DiscoveryMethod.spec, StatisticsMethod.spec, CancelRequestMethod.spec]

    static let byName: [String: MethodSpec] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })

    /// The names served, sorted.
    static var names: [String] { all.map(\.name).sorted() }

    /// The names served, prepared for the suggestion of -32601.
    static let nearNames = NearNames(names)

    /// The served method near `method` (`Text.near`), remembered for the last names asked about: a host that
    /// keeps calling a method the daemon does not serve pays for the search once (at most 64 names, then the
    /// memo starts again).
    static func nearMethod(_ method: String) -> String? {
        guard method.utf8.count <= NearNames.longestAsked else { return nil }
        if let known = nearMemo.withLock({ $0[method] }) { return known }
        let near = nearNames.near(method)
        nearMemo.withLock { memo in
            if memo.count >= 64 { memo.removeAll(keepingCapacity: true) }
            memo[method] = .some(near)
        }
        return near
    }

    private static let nearMemo = Mutex<[String: String?]>([:])
}

extension ErrorObject {
    /// -32601 for a method the daemon does not serve, with the served method whose name is near it
    /// (`Text.near`), if any: `Method not found: 'getAuthorisation'; did you mean 'getAuthorization'?`; for a name
    /// the daemon itself sends (a callback such as `setAuthenticationStatus`), that reason instead.
    static func methodNotFound(_ method: String) -> ErrorObject {
        // Any case of it: `SetAuthenticationStatus` is not a served name near one either.
        guard let sent = OpenRPC.daemonToHost.first(where: { $0.lowercased() == method.lowercased() }) else {
            return .methodNotFound(method, closest: MethodTable.nearMethod(method))
        }
        let named = sent == method ? "'\(method)'" : "'\(method)' ('\(sent)')"
        return ErrorObject(
            code: .methodNotFound, message: "Method not found: \(named) is sent by the daemon to the host",
            data: [
                "method": .string(method),
                "reason": "the daemon sends it (Protocol/openrpc.json, x-direction daemon-to-host); a host does not",
            ])
    }
}
