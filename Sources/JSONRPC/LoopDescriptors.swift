import ThreadAffinity

/// A connection's event loop as another module may use it (`Connection.loopDescriptors`): the executor it is for
/// the actors that run on it, the descriptors it waits on for them, and its timers. The engine's HTTP transfers use
/// it, so that a request to the backend is sent and its answer read on the loop's thread, in the loop's own wait.
public struct LoopDescriptors: Sendable {
    let loop: EventLoop

    /// The loop as the serial executor of the actors that run on it.
    public var executor: any SerialExecutor { loop }

    /// Loop thread: `ready(readable, writable)` runs on the loop thread whenever `fd` is readable (`reading`) or
    /// writable (`writing`), until `forget(_:)`; a second watch of `fd` replaces the first.
    public func watch(_ fd: Int32, reading: Bool, writing: Bool, _ ready: @escaping (_ readable: Bool, _ writable: Bool) -> Void) {
        loop.watch(fd, reading: reading, writing: writing, ready)
    }

    /// Loop thread: stops waiting on `fd`.
    public func forget(_ fd: Int32) { loop.forget(fd) }

    /// Any thread: runs `body` on the loop thread once `delay` has passed, unless the handle cancels it first.
    @discardableResult
    public func run(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> Scheduled { loop.run(after: delay, body) }
}

extension Connection {
    /// This connection's event loop, for work that waits on descriptors of its own there (`LoopDescriptors`).
    public var loopDescriptors: LoopDescriptors { LoopDescriptors(loop: loop) }
}
