import JSON
import JSONRPC

/// `rpc.discover` → the OpenRPC document of `Protocol/openrpc.json` (jsonrpc-notes §2.8); never queued.
enum DiscoveryMethod {
    static let name = "rpc.discover"

    static let spec = MethodSpec(name: name, needsRequestor: false) { _, _ in .now(OpenRPC.document) }
}
