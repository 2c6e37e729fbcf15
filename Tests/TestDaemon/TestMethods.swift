import Bridge
import Dispatch
import JSON
import JSONRPC

/// The test daemon's handler of one connection: the methods of ``TestMethods``, then the connection's
/// application instance for everything else.
final class TestMethodsHandler: RPCHandler {
    private let next: RPCHandler

    init(next: RPCHandler) { self.next = next }

    func handle(method: String, params: JSON?, id: RequestID?, on connection: Connection) {
        if let test = TestMethods(rawValue: method) {
            test.run(params: params, id: id, on: connection)
        } else {
            next.handle(method: method, params: params, id: id, on: connection)
        }
    }

    func connectionClosed(_ connection: Connection) { next.connectionClosed(connection) }
}

/// Methods only the test daemon serves (never listed in the OpenRPC document): the JSON-RPC 2.0 specification's
/// section 7 examples, and probes of the transport.
enum TestMethods: String {
    /// Spec §7: `[minuend, subtrahend]` or `{minuend, subtrahend}` → difference.
    case subtract
    /// Spec §7: `[numbers…]` → their sum.
    case sum
    /// Spec §7: `[]` → `["hello", 5]`.
    case getData = "get_data"
    /// Spec §7 notifications, accepted and ignored.
    case update, notifyHello = "notify_hello", notifySum = "notify_sum"
    /// `params` echoed back as the result (`null` when absent).
    case echo
    /// `{ms, result?}`: answers from another thread after `ms` milliseconds.
    case sleep = "test/sleep"
    /// `{count, method?}`: sends `count` notifications (`test/event {n}`), then answers `{sent}`.
    case notify = "test/notify"
    /// `{method, params?, timeoutMs?}`: sends a daemon→host request and answers with the host's answer
    /// as `{result}` or `{error}`.
    case callHost = "test/callHost"
    /// Writes a line with `print` (it must land on stderr), then answers `true`.
    case strayPrint = "test/print"

    func run(params: JSON?, id: RequestID?, on connection: Connection) {
        let answer: @Sendable (Result<JSON, ErrorObject>) -> Void = { result in
            guard let id else { return }
            switch result {
            case .success(let value): connection.respond(to: id, result: value)
            case .failure(let error): connection.respond(to: id, error: error)
            }
        }
        switch self {
        case .subtract: answer(subtract(params))
        case .sum: answer(sum(params))
        case .getData: answer(.success(["hello", 5]))
        case .update, .notifyHello, .notifySum: answer(.success(.null))
        case .echo: answer(.success(params ?? .null))
        case .sleep:
            let milliseconds = params?["ms"]?.intValue ?? 0
            let result = params?["result"] ?? .null
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) {
                answer(.success(result))
            }
        case .notify:
            let count = params?["count"]?.intValue ?? 1
            let method = params?["method"]?.stringValue ?? "test/event"
            for index in 0..<count {
                connection.notify(method: method, params: ["n": .integer(Int64(index))])
            }
            answer(.success(["sent": .integer(Int64(count))]))
        case .callHost:
            guard let method = params?["method"]?.stringValue else {
                answer(.failure(.invalidParams("method (string) is required")))
                return
            }
            let timeout = Duration.milliseconds(params?["timeoutMs"]?.intValue ?? 5000)
            connection.request(method: method, params: params?["params"] ?? .null, timeout: timeout) { result in
                switch result {
                case .success(let value): answer(.success(["result": value]))
                case .failure(let failure): answer(.success(["error": failure.errorObject.json]))
                }
            }
        case .strayPrint:
            print("a stray print from a test method")
            answer(.success(true))
        }
    }

    private func numbers(_ values: [JSON]) -> [JSON]? {
        values.allSatisfy({ $0.isNumber }) ? values : nil
    }

    private func subtract(_ params: JSON?) -> Result<JSON, ErrorObject> {
        let pair: (JSON, JSON)?
        switch params {
        case .array(let values)? where values.count == 2: pair = (values[0], values[1])
        case .object(let object)?:
            pair = object["minuend"].flatMap { minuend in object["subtrahend"].map { (minuend, $0) } }
        default: pair = nil
        }
        guard let (minuend, subtrahend) = pair, let values = numbers([minuend, subtrahend]) else {
            return .failure(.invalidParams("subtract takes [minuend, subtrahend] or {minuend, subtrahend}, numbers"))
        }
        if let a = values[0].int64Value, let b = values[1].int64Value, case .integer = values[0], case .integer = values[1] {
            let (difference, overflow) = a.subtractingReportingOverflow(b)
            if !overflow { return .success(.integer(difference)) }
        }
        return .success(.double((values[0].doubleValue ?? 0) - (values[1].doubleValue ?? 0)))
    }

    private func sum(_ params: JSON?) -> Result<JSON, ErrorObject> {
        guard case .array(let values)? = params, let values = numbers(values) else {
            return .failure(.invalidParams("sum takes an array of numbers"))
        }
        var total: Int64 = 0
        var exact = true
        for value in values {
            guard case .integer(let number) = value else {
                exact = false
                break
            }
            let (next, overflow) = total.addingReportingOverflow(number)
            if overflow {
                exact = false
                break
            }
            total = next
        }
        if exact { return .success(.integer(total)) }
        return .success(.double(values.reduce(0) { $0 + ($1.doubleValue ?? 0) }))
    }
}
