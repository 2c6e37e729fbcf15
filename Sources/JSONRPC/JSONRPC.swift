// The JSON-RPC 2.0 layer (issue 2).
import JSON
