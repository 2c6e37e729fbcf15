// JSON-RPC ⇄ engine mapping (issue 5).
