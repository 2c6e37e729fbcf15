import Glibc

/// How the processes on one SQLite file tell each other that a login changed, so that a look for other processes'
/// changes comes when one does rather than at the look's interval (`SQLiteStore.notificationSocket`).
///
/// Each writer of a login sets the database file's times to now (`utimensat`) once its transaction has committed,
/// and each store on the file watches the file with inotify for that (`IN_ATTRIB`): the watch turns readable, the
/// store's worker wakes in its `poll` and looks. Nothing else a store does changes the file's attributes (SQLite
/// writes it, which is `IN_MODIFY`, and only at a checkpoint). The writes cannot serve: SQLite writes a commit to
/// its `-wal` file and then publishes it in the `-shm` index, a store mapping that no inotify event follows, so a
/// watcher woken by the `-wal` write could look before the commit shows and then sleep past it.
///
/// Announcing needs no descriptor, so that a process that cannot have a watch (inotify's per-user limit, no file
/// descriptor left) still tells the others; only its own looks then come at their interval.
final class LoginAnnouncement {
    private let path: String
    /// The inotify instance watching the file, which the store's worker polls; nil when none could be had.
    let watch: Int32?

    /// Announces for, and watches, the database file at `path` (which SQLite has open).
    init(databasePath path: String) {
        self.path = path
        let watch = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        if watch >= 0, inotify_add_watch(watch, path, UInt32(IN_ATTRIB)) < 0 {
            Glibc.close(watch)
            self.watch = nil
        } else {
            self.watch = watch >= 0 ? watch : nil
        }
    }

    deinit {
        if let watch { Glibc.close(watch) }
    }

    /// Tells the other processes on the file that a login changed; call it after the change has committed. One that
    /// fails is not tried again: the readers' next look (the next announcement, or their interval when they have no
    /// watch) still finds the change.
    func announce() { _ = utimensat(AT_FDCWD, path, nil, AT_SYMLINK_NOFOLLOW) }

    /// Reads the watch's pending events, so that it turns readable again only at the next announcement.
    func drain() {
        guard let watch else { return }
        var buffer = (Int64(0), Int64(0), Int64(0), Int64(0), Int64(0), Int64(0), Int64(0), Int64(0))
        while withUnsafeMutableBytes(of: &buffer, { read(watch, $0.baseAddress, $0.count) }) > 0 {}
    }
}
