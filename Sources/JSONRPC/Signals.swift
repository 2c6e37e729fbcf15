import Glibc
import ThreadAffinity

/// SIGTERM, SIGINT and SIGHUP handling without async-signal-safety traps: a handler may call only async-signal-safe
/// functions, so the signals are blocked everywhere and taken by sigwait(3) on a thread of their own.
public enum TerminationSignals {
    /// The thread that takes the signals and runs the action; debug builds check it in the action's callees.
    public static let thread = ThreadAffinity()

    /// The signals that stop the process: SIGTERM, SIGINT, and SIGHUP (the terminal of a daemon run by hand
    /// closed; there is no configuration to reload).
    static var set: sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for number in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&set, number) }
        return set
    }

    /// Blocks `set` in this thread (and every thread started after), ignores SIGPIPE,
    /// and starts a thread that calls `action` with the signal number each time one arrives.
    /// Call first thing in `main`, before any other thread exists.
    public static func handle(_ action: @escaping @Sendable (Int32) -> Void) {
        signal(SIGPIPE, SIG_IGN)
        let mask = set
        var blocked = mask
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        startThread {
            thread.claim()
            var waitSet = mask
            while true {
                var received: Int32 = 0
                if sigwait(&waitSet, &received) == 0 { action(received) }
            }
        }
    }
}
