import AccessEnabler
import JSON
import JSONRPC

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
/// step that validates its params (-32602) and returns what to run.
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
        + [DiscoveryMethod.spec, StatisticsMethod.spec]

    static let byName: [String: MethodSpec] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })

    /// The names served, sorted.
    static var names: [String] { all.map(\.name).sorted() }
}

extension ErrorObject {
    /// -32601 for a method the daemon does not serve, with the served method whose name is near it
    /// (`Text.near`), if any: `Method not found: 'getAuthorisation'; did you mean 'getAuthorization'?`.
    static func methodNotFound(_ method: String) -> ErrorObject {
        .methodNotFound(method, closest: Text.near(method, in: MethodTable.names))
    }
}
