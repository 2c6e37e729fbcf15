import JSONRPC

/// `rpc.discover` → the OpenRPC document of `Protocol/openrpc.json` as compiled into the binary
/// (`OpenRPC.compactText`, written by the EmbedOpenRPC build plugin); never queued.
enum DiscoveryMethod {
    static let name = "rpc.discover"

    static let spec = MethodSpec(name: name, needsRequestor: false) { _, _ in .nowEncoded(OpenRPC.compactText) }
}
