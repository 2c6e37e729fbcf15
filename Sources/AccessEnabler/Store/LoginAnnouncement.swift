import Glibc

/// How the processes on one SQLite file tell each other that a login changed, so that a look for other processes'
/// changes comes when one does rather than at the look's interval (`SQLiteStore.notificationSocket`).
///
/// Each writer of a login sets the database file's times to now (`futimens`) once its transaction has committed,
/// and each store on the file watches the file with inotify for that (`IN_ATTRIB`): the watch turns readable, the
/// store's worker wakes in its `poll` and looks. Nothing else a store does changes the file's attributes (SQLite
/// writes it, which is `IN_MODIFY`, and only at a checkpoint). The writes cannot serve: SQLite writes a commit to
/// its `-wal` file and then publishes it in the `-shm` index, a store mapping that no inotify event follows, so a
/// watcher woken by the `-wal` write could look before the commit shows and then sleep past it.
final class LoginAnnouncement {
    /// The database file, open for reading (its owner may set its times without writing it).
    private let file: Int32
    /// The inotify instance watching the file: what the store's worker polls.
    let watch: Int32

    /// Watches the database file at `path` (which SQLite has open); nil when the file or the watch cannot be had
    /// (then the store looks at its interval, as a store without one does).
    init?(databasePath path: String) {
        file = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        watch = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard file >= 0, watch >= 0, inotify_add_watch(watch, path, UInt32(IN_ATTRIB)) >= 0 else {
            if file >= 0 { Glibc.close(file) }
            if watch >= 0 { Glibc.close(watch) }
            return nil
        }
    }

    deinit {
        Glibc.close(file)
        Glibc.close(watch)
    }

    /// Tells the other processes on the file that a login changed; call it after the change has committed. One that
    /// fails is not tried again: the readers' next look (the next announcement, or their interval when they have no
    /// watch) still finds the change.
    func announce() { _ = futimens(file, nil) }

    /// Reads the watch's pending events, so that it turns readable again only at the next announcement.
    func drain() {
        var buffer = (Int64(0), Int64(0), Int64(0), Int64(0), Int64(0), Int64(0), Int64(0), Int64(0))
        while withUnsafeMutableBytes(of: &buffer, { read(watch, $0.baseAddress, $0.count) }) > 0 {}
    }
}
