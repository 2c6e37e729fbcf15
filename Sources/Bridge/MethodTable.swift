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

    /// The -32601 of each name asked about, remembered for the last ones: a host that keeps calling a method the
    /// daemon does not serve pays for the search once (at most 64 names, then the memo starts again).
    static let notFoundMemo = Mutex<[String: ErrorObject]>([:])

    /// The names the daemon sends (`OpenRPC.daemonToHost`), by their lowercase form.
    static let sentByDaemon = Dictionary(uniqueKeysWithValues: OpenRPC.daemonToHost.map { ($0.lowercased(), $0) })
}

extension ErrorObject {
    /// -32601 for a method the daemon does not serve, with the served method whose name is near it
    /// (`Text.near`), if any: `Method not found: 'getAuthorisation'; did you mean 'getAuthorization'?`; for a name
    /// the daemon itself sends (a callback such as `setAuthenticationStatus`), in any case, that reason instead.
    static func methodNotFound(_ method: String) -> ErrorObject {
        // A name longer than any served or sent one is none of them, and is not kept.
        guard method.utf8.count <= NearNames.longestAsked else { return .methodNotFound(method, closest: nil) }
        if let known = MethodTable.notFoundMemo.withLock({ $0[method] }) { return known }
        let error: ErrorObject
        if let sent = MethodTable.sentByDaemon[method.lowercased()] {
            let named = sent == method ? "'\(method)'" : "'\(method)' ('\(sent)')"
            error = ErrorObject(
                code: .methodNotFound, message: "Method not found: \(named) is sent by the daemon to the host",
                data: [
                    "method": .string(method),
                    "reason": "the daemon sends it (Protocol/openrpc.json, x-direction daemon-to-host); a host does not",
                ])
        } else {
            error = .methodNotFound(method, closest: MethodTable.nearNames.near(method))
        }
        MethodTable.notFoundMemo.withLock { memo in
            if memo.count >= 64 { memo.removeAll(keepingCapacity: true) }
            memo[method] = error
        }
        return error
    }
}
