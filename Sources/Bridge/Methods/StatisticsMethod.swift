import JSON
import JSONRPC

/// `rpc.stats` → the daemon's live instances, connections, calls in flight and reads of stored logins; never
/// queued, no requestor needed.
enum StatisticsMethod {
    static let name = "rpc.stats"

    static let spec = MethodSpec(name: name, needsRequestor: false) { instance, _ in
        .now(instance.statistics.json(store: instance.configuration.store))
    }
}
