import AccessEnabler
import CShims
import Dispatch
import Glibc
import JSONRPC

/// Opens the daemon's store before any connection is served: `--store postgresql://…` connects now, SQLite in the
/// state directory checks the directory now and opens the database with the first call that needs it. The device
/// identifier is read by the first setRequestor (`Engine.resolveDeviceID`).
public enum StoreSetup {
    /// - Throws: `CommandLineError.failure` with one line for stderr (exit 1).
    /// - Parameters:
    ///   - lookInterval: `DaemonOptions.storeLookInterval`.
    ///   - logsFailures: false for a command that reports each failure itself (`passbridge state`); the daemon's
    ///     store logs them, by runs (`Protocol/README.md`, "The store").
    public static func open(
        store url: String?, stateDirectory: String, lookInterval: Duration = TokenStore.defaultLookInterval,
        logsFailures: Bool = true
    ) throws(CommandLineError) -> TokenStore {
        do {
            let store: TokenStore
            if let url {
                guard url.hasPrefix("postgresql://") || url.hasPrefix("postgres://") else {
                    // Never the value itself: libpq's key=value settings, or a URL, may hold a password.
                    let lowered = url.lowercased()
                    let got =
                        lowered.hasPrefix("postgresql://") || lowered.hasPrefix("postgres://")
                        ? "a scheme not in lower case (libpq takes postgresql:// and postgres:// only)"
                        : url.contains("://")
                            ? PostgreSQLURL.redacted(url)
                            : url.contains("=")
                                ? "libpq key=value settings, which are not taken here: write them as a URL's query "
                                    + "(postgresql:///DATABASE?host=…&user=…)"
                                : url.isEmpty ? "an empty value" : "something that is not a URL"
                    throw CommandLineError.failure("--store needs a postgresql:// URL, got \(got)")
                }
                store = try TokenStore(
                    postgreSQL: url, log: Logger.sink(label: "store"), logsFailures: logsFailures, lookInterval: lookInterval)
            } else {
                store = try TokenStore(
                    directory: stateDirectory, lookInterval: lookInterval, log: Logger.sink(label: "store"), logsFailures: logsFailures)
            }
            return store
        } catch let error as CommandLineError {
            throw error
        } catch {
            let place = url.map { PostgreSQLURL.redacted($0) } ?? "the state directory \(stateDirectory)"
            throw .failure("cannot open \(place): \(error)")
        }
    }

    /// With `--backend emulator` and no `--state-dir`: a fresh private directory, so that trying the emulator
    /// never touches the production store.
    static func emulatorStateDirectory() throws(CommandLineError) -> String {
        var template = Array(((getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp") + "/passbridge-emulator-XXXXXX").utf8CString)
        guard let path = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }).map({ String(cString: $0) }) else {
            throw .failure("cannot create a temporary state directory for --backend emulator: \(String(cString: strerror(errno)))")
        }
        return path
    }

    /// Removes `emulatorStateDirectory`'s directory and everything in it (symbolic links not followed); what
    /// cannot be removed is left.
    static func removeEmulatorStateDirectory(_ path: String) { _ = cshims_remove_tree(path) }

    /// Waits for `body` (start-up only: nothing is served yet).
    public static func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let result = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task {
            do { result.value = .success(try await body()) } catch { result.value = .failure(error) }
            done.signal()
        }
        done.wait()
        return try result.value!.get()
    }
}

/// A result handed from a task to the thread waiting on the semaphore.
private final class ResultBox<T>: @unchecked Sendable {
    var value: Result<T, any Error>?
}
