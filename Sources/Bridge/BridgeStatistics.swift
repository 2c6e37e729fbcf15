import AccessEnabler
import CShims
import JSON
import Synchronization

/// What `rpc.stats` reports (`Protocol/README.md`, "Diagnostics"): counters shared by every connection's
/// `ApplicationInstance` in one daemon.
final class BridgeStatistics: Sendable {
    /// Connections with an open instance (a connection gets one at its first message, and loses it when it closes).
    let connections = Atomic<Int>(0)
    /// Engine calls accepted and not answered yet, those waiting for setRequestor included.
    let callsInFlight = Atomic<Int>(0)
    /// When the daemon began serving (the statistics are made then).
    let started = ContinuousClock.now

    /// `{instances, connections, callsInFlight, profileReads: {memory, store}, authorizationExpiries: {written,
    /// unchanged}, storeFailures: {operations, failing (0 or 1)}, heapBytes, uptimeSeconds}`; `instances` counts the
    /// AccessEnabler instances alive in the process (one per connection that made an engine call, until it is freed
    /// after its connection closed); `profileReads` counts the
    /// reads of stored logins since start, those served from the daemon's memory (`TokenStore.watch`) and those that
    /// waited on the store, re-reads after a change made elsewhere included; `authorizationExpiries` the cached
    /// expiries written to the store and those not written because it held them (`TokenStore.submit`);
    /// `storeFailures` the store operations that failed since start and whether it is failing now
    /// (`TokenStore.failures`);
    /// `heapBytes` the bytes the C allocator has handed out and not taken back, every thread's arena and its mmapped
    /// blocks (glibc's `mallinfo2`: `uordblks + hblkhd`; Swift's objects and buffers are among them): unlike RSS, it
    /// does not count what the allocator keeps for reuse, so it tells a leak from an arena that grew once;
    /// `uptimeSeconds` is the time since the daemon began serving, in seconds (ms resolution).
    func json(store: TokenStore) -> JSON {
        let reads = store.profileReads
        let expiries = store.authorizationExpiries
        let failures = store.failures
        let (seconds, attoseconds) = (ContinuousClock.now - started).components
        let heap = mallinfo2()
        return [
            "instances": .integer(Int64(Engine.liveInstances)),
            "connections": .integer(Int64(connections.load(ordering: .relaxed))),
            "callsInFlight": .integer(Int64(callsInFlight.load(ordering: .relaxed))),
            "profileReads": ["memory": .integer(Int64(reads.memory)), "store": .integer(Int64(reads.store))],
            "authorizationExpiries": ["written": .integer(Int64(expiries.written)), "unchanged": .integer(Int64(expiries.unchanged))],
            "storeFailures": ["operations": .integer(Int64(failures.operations)), "failing": .integer(failures.failing ? 1 : 0)],
            "heapBytes": .integer(Int64(heap.uordblks + heap.hblkhd)),
            // Whole milliseconds over 1000: the double nearest to the three-decimal value, written with three decimals
            // at most (seconds plus milliseconds/1000 is often one ulp off it: 1.3940000000000001).
            "uptimeSeconds": .double(Double(seconds * 1000 + attoseconds / 1_000_000_000_000_000) / 1000),
        ]
    }
}
