import JSON
import JSONRPC

/// `rpc.discover` → the OpenRPC document of `Protocol/openrpc.json`; never queued. The answer copies the
/// document's compact text, serialized once.
enum DiscoveryMethod {
    static let name = "rpc.discover"

    static let spec = MethodSpec(name: name, needsRequestor: false) { _, _ in .nowEncoded(OpenRPC.compactText) }
}

extension OpenRPC {
    /// The document as compact JSON text, serialized on first use.
    public static let compactText: [UInt8] = document.serialized()
}
