import Bridge
import Glibc
import JSONRPC
import Synchronization

/// Who to tell when SIGTERM or SIGINT arrives (set once the transport exists).
private let stopAction = Mutex<(@Sendable () -> Void)?>(nil)

/// Runs the daemon on the chosen transport until it has drained; returns the exit code.
func serve(_ options: DaemonOptions) -> Int32 {
    let log = Logger(label: "main")
    TerminationSignals.handle { signal in
        log.info("signal \(signal): stopping")
        if let stop = stopAction.withLock({ $0 }) { stop() } else { exit(0) }
    }
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
        stopAction.withLock { $0 = { server.shutdown() } }
        log.info("serving the socket inherited from systemd (fd \(inherited))")
        server.run(factory)
        return 0
    }
    switch options.transport {
    case .stdio:
        let transport = StdioTransport(limits: options.limits)
        stopAction.withLock { $0 = { transport.shutdown() } }
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
        stopAction.withLock { $0 = { server.shutdown() } }
        log.info("listening on \(path)")
        server.run(factory)
        return 0
    }
}
