import AccessEnabler
import ArgumentParsing
import Glibc
import JSONRPC
import Synchronization
import ThreadAffinity

/// What SIGTERM, SIGINT and SIGHUP do: the first asks the transport to drain, or ends the process at once (status 0)
/// when none is installed yet (start-up); a second one, while draining, ends the process without waiting; once the
/// daemon has stopped (`stopped()`: its exit status is decided and logged), they do nothing.
final class Stopper: Sendable {
    private struct State {
        var action: (@Sendable () -> Void)?
        /// What must not outlive the process, done before a second signal ends it.
        var beforeForcedExit: (@Sendable () -> Void)?
        var signals = 0
        /// When the first signal came.
        var firstSignal: ContinuousClock.Instant?
        var stopped = false
    }

    private let state = Mutex(State())

    /// Called on the signal thread.
    func received(_ signal: Int32, log: Logger) {
        TerminationSignals.thread.check("Stopper.received")
        let action = state.withLock { state -> (@Sendable () -> Void)? in
            // Stopped: the exit status is decided and logged; nothing to do.
            if state.stopped { return nil }
            state.signals += 1
            if state.firstSignal == nil { state.firstSignal = .now }
            if state.action == nil {
                // Still starting (connecting to PostgreSQL, say): nothing accepted, nothing to drain, no reason to
                // wait. Done holding the lock, which is never let go: start-up steps that touch what
                // `beforeForcedExit` undoes (`make`, `starting`) and `install` wait for it, so nothing is made again
                // after it is undone, and nothing is served.
                log.logBeforeExit(.info, "signal \(signal) during start-up: exiting")
                state.beforeForcedExit?()
                _exit(0)
            }
            if state.signals > 1 {
                // Holding the lock too, so that the daemon, which takes it to say it stopped, cannot log another
                // status meanwhile. What must not outlive the process goes first: a stderr nobody reads delays the
                // line, not the removal.
                state.beforeForcedExit?()
                log.logBeforeExit(.error, "signal \(signal) again while stopping: exiting without draining")
                _exit(1)
            }
            return state.action
        }
        guard let action else { return }
        log.info("signal \(signal): stopping")
        action()
    }

    /// The daemon has stopped and is about to exit with the status it logs: a signal now changes nothing (a second
    /// one used to end it with status 1 after it had logged status 0).
    func stopped() { state.withLock { $0.stopped = true } }

    /// When what is left of the daemon's work must be done by: `shutdownTimeout` after the first signal, or 1 s from
    /// now when no signal came (end of input on stdio, whose drain has already run).
    func deadline(shutdownTimeout: Duration) -> ContinuousClock.Instant {
        state.withLock { $0.firstSignal }.map { $0 + shutdownTimeout } ?? .now + .seconds(1)
    }

    /// Makes what must not outlive the process (`make`: a temporary directory, say) and sets `undo` on it as what a
    /// signal does before it ends the process, in one step: a signal that comes meanwhile waits for both, where
    /// between the two it would have left what was made.
    func make(
        _ make: () throws(CommandLineError) -> String, undoneBeforeForcedExitBy undo: @escaping @Sendable (String) -> Void
    ) throws(CommandLineError) -> String {
        try state.withLock { (state) throws(CommandLineError) -> String in
            let made = try make()
            state.beforeForcedExit = { undo(made) }
            return made
        }
    }

    /// Runs a start-up step that touches what `make` made (the temporary state directory) so that a signal does not
    /// undo it midway: the signal waits for the step, and a step after the signal never starts.
    func starting<T>(_ step: () throws(CommandLineError) -> T) throws(CommandLineError) -> T {
        try state.withLock { (_) throws(CommandLineError) -> T in try step() }
    }

    /// Sets what stops the transport. After a signal during start-up it never returns (the signal thread keeps the
    /// lock and ends the process), so that nothing is served.
    func install(_ action: @escaping @Sendable () -> Void) { state.withLock { $0.action = action } }
}

/// The daemon: what `passbridge` runs once its command line is parsed.
public enum Daemon {
    /// Starts the backend and store `options` name, then serves the chosen transport until it has drained;
    /// returns the exit status (1, after one line on stderr, when the backend or the store cannot start).
    /// - Parameter wrapInstance: given a new connection's `ApplicationInstance`, the handler that serves the
    ///   connection: the instance itself by default; the test daemon puts its test methods in front of it.
    public static func run(
        _ options: DaemonOptions, wrapInstance: @escaping @Sendable (any RPCHandler) -> any RPCHandler = { $0 }
    ) -> Int32 {
        Logger.level = options.logLevel
        let log = Logger(label: "main")
        let stopper = Stopper()
        TerminationSignals.handle { signal in stopper.received(signal, log: log) }
        // A socket path that cannot be served (another daemon's, in a missing directory, not a socket) is refused
        // before the backend and the store make anything (a state directory, an emulator child); binding checks again.
        if case .socket(let path) = options.transport, getenv("LISTEN_FDS") == nil {
            do throws(SocketServerError) {
                try UnixSocketServer.checkServable(path: path)
            } catch {
                writeError("passbridge: \(error)")
                return 1
            }
        }
        let backend: Backend
        do throws(CommandLineError) {
            backend = try Backend.start(options, stopper: stopper)
        } catch {
            if case .failure(let message) = error { writeError("passbridge: \(message)") }
            return 1
        }
        let configuration = backend.configuration
        let statistics = BridgeStatistics()
        let (status, onSocket) = serve(
            options,
            factory: { connection in
                // The engines' HTTP transfers run on the connection's loop, in its own wait (once per loop).
                HTTPLoops.drive(connection.executor, on: LoopForTransfers(connection.loopDescriptors))
                return wrapInstance(ApplicationInstance(outbound: connection, configuration: configuration, statistics: statistics))
            }, stopper: stopper, serving: backend.description, log: log)
        backend.stop(by: stopper.deadline(shutdownTimeout: options.limits.shutdownTimeout))
        stopper.stopped()
        // The last line, as the start-up line: at the default level on a socket, at debug over stdio.
        let stopped = "stopped, exit status \(status)"
        if onSocket { log.info(stopped) } else { log.debug(stopped) }
        return status
    }

    /// `serving`: the backend and the store (`Backend.description`), logged with the transport once it is up, so
    /// that an operator's log says what a daemon serves; a socket's clients, unlike a stdio host, never see a
    /// `--backend emulator` child start, and its `/activate` page is there. Returns the exit status, and whether a
    /// socket was served.
    private static func serve(
        _ options: DaemonOptions, factory: @escaping RPCHandlerFactory, stopper: Stopper, serving: String, log: Logger
    ) -> (Int32, onSocket: Bool) {
        let access = SocketAccess(group: options.socketGroup, allowedUIDs: options.allowedUIDs)
        if let inherited = UnixSocketServer.systemdListenFD() {
            let server = UnixSocketServer(inheritedFD: inherited, access: access, limits: options.limits)
            stopper.install { server.shutdown() }
            log.info("serving the socket inherited from systemd (fd \(inherited)); \(serving)")
            server.run(factory)
            return (0, true)
        }
        switch options.transport {
        case .stdio:
            let transport = StdioTransport(limits: options.limits)
            stopper.install { transport.shutdown() }
            // Debug: a host that spawns the daemon shares its stderr, which stays quiet at the default level.
            log.debug("serving stdin and stdout; \(serving)")
            transport.run(factory)
            return (0, false)
        case .socket(let path):
            let server: UnixSocketServer
            do {
                server = try UnixSocketServer(path: path, access: access, limits: options.limits)
            } catch {
                writeError("passbridge: \(error)")
                return (1, false)  // the line above is the only one: nothing was served
            }
            stopper.install { server.shutdown() }
            log.info("listening on \(path); \(serving)")
            server.run(factory)
            return (0, true)
        }
    }
}

/// The connection's event loop as the engines' HTTP transfers use it (`HTTPLoops`).
private final class LoopForTransfers: DescriptorLoop {
    let descriptors: LoopDescriptors

    init(_ descriptors: LoopDescriptors) { self.descriptors = descriptors }

    func watch(_ fd: Int32, reading: Bool, writing: Bool, _ ready: @escaping (_ readable: Bool, _ writable: Bool) -> Void) {
        descriptors.watch(fd, reading: reading, writing: writing, ready)
    }

    func forget(_ fd: Int32) { descriptors.forget(fd) }

    func run(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> Scheduled { descriptors.run(after: delay, body) }
}
