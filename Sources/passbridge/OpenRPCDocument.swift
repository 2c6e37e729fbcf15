// Generated from Protocol/openrpc.json by OpenRPCDocumentTests (UPDATE_OPENRPC=1); do not edit by hand.
import JSON

/// The OpenRPC document `rpc.discover` returns, embedded so an installed binary needs no data files.
enum OpenRPCDocument {
    static let text = #"""
{
  "openrpc": "1.3.2",
  "info": {
    "title": "PassBridge",
    "version": "0.1.0",
    "description": "AccessEnabler over JSON-RPC 2.0 (stdio or Unix socket). rpc.discover returns this document. Framing, lifecycle and flows: Protocol/README.md."
  },
  "methods": [],
  "components": {
    "errors": {
      "ParseError": { "code": -32700, "message": "Parse error" },
      "InvalidRequest": { "code": -32600, "message": "Invalid Request" },
      "MethodNotFound": { "code": -32601, "message": "Method not found" },
      "InvalidParams": { "code": -32602, "message": "Invalid params" },
      "InternalError": { "code": -32603, "message": "Internal error" },
      "RequestorNotSet": { "code": -32002, "message": "Requestor not set", "data": { "reason": "call setRequestor first" } },
      "ShuttingDown": { "code": -32003, "message": "Shutting down", "data": { "reason": "the daemon is shutting down" } },
      "Overloaded": { "code": -32004, "message": "Overloaded", "data": { "reason": "too many requests in flight", "limit": 1024 } },
      "MessageTooLarge": { "code": -32004, "message": "Message too large", "data": { "reason": "message too large", "limit": 16777216 } }
    }
  }
}
"""#

    /// The document as a JSON value (parsed once).
    static let json: JSON = {
        do {
            return try JSON.parse(text)
        } catch {
            fatalError("embedded OpenRPC document is not JSON: \(error)")
        }
    }()
}
