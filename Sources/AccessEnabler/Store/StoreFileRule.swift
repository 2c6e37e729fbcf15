import Glibc

/// The store file rule: the files the daemon owns in the state directory (`passbridge.sqlite` and SQLite's
/// `-wal`, `-shm` and `-journal` beside it) are private to the effective user, mode 0600.
///
/// Before SQLite opens the database (`prepare`), each of them that exists must be a regular file (not a symbolic
/// link) owned by the effective user, else it is refused and left as it is; one whose mode gives its group or
/// others any access is chmod'ed 0600 (a restored backup, a copy made by hand). SQLite creates the `-wal` and
/// `-shm` files with the main file's mode whatever the umask, so once that is 0600 so are they; after the open,
/// `verify` checks it. Only the effective user (and root) can add or rename files in the state directory
/// (`StateDirectoryRule`), so nobody else can swap a file between the checks; the file is still opened with
/// `O_NOFOLLOW` and compared by inode before `fchmod`.
enum StoreFileRule {
    /// SQLite's files for the database `path`.
    static func files(of path: String) -> [String] {
        ["", "-wal", "-shm", "-journal"].map { path + $0 }
    }

    /// Refuses or tightens each existing file of the database `path`, before it is opened.
    /// - Returns: one line per file made 0600, naming it and the mode it had (for the log).
    /// - Throws: `TokenStoreError.unsafeStoreFile` (the file is left untouched), `.io`.
    static func prepare(_ path: String) throws(TokenStoreError) -> [String] {
        var tightened: [String] = []
        for file in files(of: path) {
            guard let info = try inspect(file), info.st_mode & 0o077 != 0 else { continue }
            try tighten(file, info)
            tightened.append("made \(file) 0600: it was \(octal(info.st_mode)), open to its group or others")
        }
        return tightened
    }

    /// Checks, after the open, that every file of the database `path` is private.
    /// - Throws: `TokenStoreError.unsafeStoreFile`, `.io`.
    static func verify(_ path: String) throws(TokenStoreError) {
        for file in files(of: path) {
            guard let info = try inspect(file), info.st_mode & 0o077 != 0 else { continue }
            throw .unsafeStoreFile(path: file, reason: "it is mode \(octal(info.st_mode)) after opening, not 0600")
        }
    }

    /// `lstat` of `file`: nil when it does not exist; refused when it is not a regular file of this user.
    private static func inspect(_ file: String) throws(TokenStoreError) -> stat? {
        var info = stat()
        guard lstat(file, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw .io(operation: "cannot inspect store file \(file)", errno: errno)
        }
        try check(info, file)
        return info
    }

    private static func check(_ info: stat, _ file: String) throws(TokenStoreError) {
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFLNK:
            throw .unsafeStoreFile(
                path: file, reason: "it is a symbolic link; put the file itself in its place, or link the whole state directory instead")
        default: throw .unsafeStoreFile(path: file, reason: "it is not a regular file; remove it")
        }
        let user = geteuid()
        if info.st_uid != user {
            throw .unsafeStoreFile(
                path: file,
                reason: "owned by uid \(info.st_uid), not by this user (uid \(user)); give it to this user: chown \(user) \(quoted(file))")
        }
    }

    /// Sets `file` (as `lstat` saw it: `seen`) to 0600 through a descriptor of that same file.
    private static func tighten(_ file: String, _ seen: stat) throws(TokenStoreError) {
        let fd = open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ELOOP { throw .unsafeStoreFile(path: file, reason: "it became a symbolic link while being checked") }
            throw .io(operation: "cannot open store file \(file) to make it 0600", errno: errno)
        }
        defer { close(fd) }
        var opened = stat()
        guard fstat(fd, &opened) == 0 else { throw .io(operation: "cannot inspect store file \(file)", errno: errno) }
        guard opened.st_dev == seen.st_dev, opened.st_ino == seen.st_ino else {
            throw .unsafeStoreFile(path: file, reason: "it was replaced while being checked")
        }
        guard fchmod(fd, 0o600) == 0 else { throw .io(operation: "cannot chmod store file \(file) to 0600", errno: errno) }
    }

    private static func octal(_ mode: mode_t) -> String {
        "0" + String(mode & 0o7777, radix: 8)
    }

    /// `path` as one shell word: as it is when it holds only safe characters, else single-quoted.
    static func quoted(_ path: String) -> String {
        let safe = path.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "/._-+,:@%=".unicodeScalars.contains(scalar))
        }
        return safe && !path.isEmpty ? path : "'" + path.map { $0 == "'" ? "'\\''" : String($0) }.joined() + "'"
    }
}
