import AccessEnabler
import JSON
import Synchronization

/// The `status` notifications the engine sends while one host request runs, so that a failed outcome's response
/// can carry them (`statuses`, Protocol/README.md "Failure reasons").
///
/// Each engine call runs with its own collector bound to `current`; the delegate records into the collector of
/// the task that reports the status. The engine reports an outcome's statuses synchronously, in the task of the
/// call that ends it, so a call's collector holds those of the outcome it returns.
final class OutcomeStatuses: Sendable {
    @TaskLocal static var current: OutcomeStatuses?

    private let recorded = Mutex<[JSON]>([])

    /// Keeps `status` (the notification's params) when it is a warning or an error.
    func record(_ status: AdvancedStatus) {
        guard status.level == "warning" || status.level == "error" else { return }
        recorded.withLock { $0.append(Wire.status(status)) }
    }

    /// Forgets what was recorded: the flow went on to the user (provider dialog, login page), so earlier statuses
    /// (a platform picker's fallback) are not the reason of the outcome that follows.
    func reset() { recorded.withLock { $0 = [] } }

    var statuses: [JSON] { recorded.withLock { $0 } }

    /// Whether `result` reports a failure: `status` 0 (setRequestor, the login family) or a `tokenRequestFailed`
    /// shape.
    static func isFailure(_ result: JSON) -> Bool {
        guard let object = result.objectValue else { return false }
        return object["status"]?.int64Value == 0 || object["errorDescription"] != nil
    }

    /// `result` with `statuses` added when it reports a failure and there are statuses to tell why.
    static func attach(_ statuses: [JSON], to result: JSON) -> JSON {
        guard !statuses.isEmpty, isFailure(result), var object = result.objectValue else { return result }
        object["statuses"] = .array(statuses)
        return .object(object)
    }
}
