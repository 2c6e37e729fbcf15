import JSON

/// Serves one connection: the daemon's side of the protocol above framing.
///
/// One handler per connection, made by the server's factory when the peer connects.
public protocol RPCHandler: AnyObject, Sendable {
    /// One request (`id` != nil) or notification (`id` == nil) from the peer, in arrival order, on the
    /// connection's reader thread; must not block. Answer each request exactly once with
    /// ``Connection/respond(to:result:)`` or ``Connection/respond(to:error:)``, from any thread, now or later.
    /// `params` is nil when absent or null, else an array or object.
    func handle(method: String, params: JSON?, id: RequestID?, on connection: Connection)
    /// The peer closed, was disconnected, or the daemon is shutting down; called once. Requests
    /// still unanswered may be answered during the shutdown timeout; what is left gets -32003.
    func connectionClosed(_ connection: Connection)
}

/// Makes the handler of a new connection.
public typealias RPCHandlerFactory = @Sendable (Connection) -> RPCHandler
