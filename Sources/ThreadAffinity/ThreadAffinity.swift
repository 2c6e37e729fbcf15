import Glibc
import Synchronization

/// The one thread some state belongs to, checked in debug builds: ``check(_:file:line:)`` stops the process when
/// called from any other thread (as swift-nio's `preconditionInEventLoop` and Dispatch's `dispatchPrecondition` do).
/// In release builds it records the owner and checks nothing.
public final class ThreadAffinity: Sendable {
    /// The owner's `pthread_t`; 0 until a thread claims it.
    private let owner = Atomic<UInt>(0)

    public init() {}

    /// Makes the calling thread the owner (the loop or worker thread, when it starts).
    public func claim() {
        owner.store(UInt(pthread_self()), ordering: .releasing)
    }

    /// True on the owner's thread only (false before any thread claimed it).
    public var isOwner: Bool {
        let id = owner.load(ordering: .acquiring)
        return id != 0 && pthread_equal(pthread_t(id), pthread_self()) != 0
    }

    /// True on the owner's thread, and before any thread claimed it.
    public var isOwnerOrUnclaimed: Bool {
        let id = owner.load(ordering: .acquiring)
        return id == 0 || pthread_equal(pthread_t(id), pthread_self()) != 0
    }

    /// In debug builds, stops the process with `what` unless called on the owner's thread (or before a claim).
    @inline(__always)
    public func check(_ what: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
        #if DEBUG
            precondition(isOwnerOrUnclaimed, "\(what()) used off its thread", file: file, line: line)
        #endif
    }
}
