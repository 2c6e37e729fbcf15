import Bridge
import Glibc
import JSONRPC
import Synchronization

/// What SIGTERM and SIGINT do: the first asks the transport to drain (at once, or as soon as it exists);
/// a second one, while draining, ends the process without waiting.
private final class Stopper: Sendable {
    private struct State {
        var action: (@Sendable () -> Void)?
        var signals = 0
    }

    private let state = Mutex(State())

    /// Called on the signal thread.
    func received(_ signal: Int32, log: Logger) {
        let (action, count) = state.withLock { state -> ((@Sendable () -> Void)?, Int) in
            state.signals += 1
            return (state.action, state.signals)
        }
        if count > 1 {
            writeError("passbridge: signal \(signal) again while stopping: exiting without draining")
            _exit(1)
        }
        log.info("signal \(signal): stopping")
        action?()
    }

    /// Sets what stops the transport; runs it at once if a signal came first.
    func install(_ action: @escaping @Sendable () -> Void) {
        let early = state.withLock { state -> Bool in
            state.action = action
            return state.signals > 0
        }
        if early { action() }
    }
}

/// Runs the daemon on the chosen transport until it has drained; returns the exit code.
func serve(_ options: DaemonOptions) -> Int32 {
    let log = Logger(label: "main")
    let stopper = Stopper()
    TerminationSignals.handle { signal in stopper.received(signal, log: log) }
    let factory: RPCHandlerFactory
    var backend: Backend?
    if options.testMethods {
        factory = { _ in ServiceHandler(testMethods: true) }
    } else {
        do throws(CommandLineError) {
            backend = try Backend.start(options)
        } catch {
            if case .failure(let message) = error { writeError("passbridge: \(message)") }
            return 1
        }
        let service = BridgeService(configuration: backend!.configuration)
        factory = { _ in service }
    }
    defer { backend?.stop() }
    let access = SocketAccess(group: options.socketGroup, allowedUIDs: options.allowedUIDs)
    if let inherited = UnixSocketServer.systemdListenFD() {
        let server = UnixSocketServer(inheritedFD: inherited, access: access, limits: options.limits)
        stopper.install { server.shutdown() }
        log.info("serving the socket inherited from systemd (fd \(inherited))")
        server.run(factory)
        return 0
    }
    switch options.transport {
    case .stdio:
        let transport = StdioTransport(limits: options.limits)
        stopper.install { transport.shutdown() }
        transport.run(factory)
        return 0
    case .socket(let path):
        let server: UnixSocketServer
        do {
            server = try UnixSocketServer(path: path, access: access, limits: options.limits)
        } catch {
            writeError("passbridge: \(error)")
            return 1
        }
        stopper.install { server.shutdown() }
        log.info("listening on \(path)")
        server.run(factory)
        return 0
    }
}
