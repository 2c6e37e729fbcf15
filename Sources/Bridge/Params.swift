import AccessEnabler
import JSON
import JSONRPC

/// A request's params by name, with typed accessors that fail with -32602 naming the param (Protocol/README.md).
///
/// `"params": null`, an absent `params` and an empty array all mean no params; names the method does not take
/// are refused before (`ParamNames`); a param whose value is null counts as absent unless the accessor allows null.
struct Params: Sendable {
    /// The params as sent (an empty object when omitted), e.g. for getMetadata's `arguments`.
    let object: JSONObject

    init(_ params: JSON?) throws(ErrorObject) {
        switch params {
        case nil, .null?: object = [:]
        case .object(let members)?: object = members
        case .array(let items)? where items.isEmpty: object = [:]
        case let other?:
            throw Params.invalid("params", "must be an object of named params, not \(other.typeName)")
        }
    }

    /// -32602 whose message names the param and the reason; `data` is `{param, reason}`.
    static func invalid(_ name: String, _ reason: String) -> ErrorObject {
        ErrorObject(
            code: .invalidParams, message: "Invalid params: '\(Text.excerpt(name))' \(reason)",
            data: ["param": .string(name), "reason": .string(reason)])
    }

    /// The value of `name`, nil when absent or null.
    func value(_ name: String) -> JSON? {
        guard let value = object[name], !value.isNull else { return nil }
        return value
    }

    func string(_ name: String) throws(ErrorObject) -> String? {
        guard let value = value(name) else { return nil }
        guard case .string(let text) = value else { throw Params.invalid(name, "must be a string, not \(value.typeName)") }
        return text
    }

    /// A string sent to the backend as a header value (a token, the visitor id): no control character but tab,
    /// so that it cannot add header lines of its own (`HeaderValue`).
    func headerValue(_ name: String) throws(ErrorObject) -> String? {
        guard let text = try string(name) else { return nil }
        guard HeaderValue.isSafe(text) else {
            throw Params.invalid(name, "must not contain control characters (it is sent as an HTTP header value)")
        }
        return text
    }

    func requiredString(_ name: String) throws(ErrorObject) -> String {
        guard let text = try string(name) else { throw Params.invalid(name, "is required (a string)") }
        return text
    }

    func bool(_ name: String) throws(ErrorObject) -> Bool? {
        guard let value = value(name) else { return nil }
        guard case .bool(let flag) = value else { throw Params.invalid(name, "must be a boolean, not \(value.typeName)") }
        return flag
    }

    func object(_ name: String) throws(ErrorObject) -> JSONObject? {
        guard let value = value(name) else { return nil }
        guard case .object(let members) = value else { throw Params.invalid(name, "must be an object, not \(value.typeName)") }
        return members
    }

    func stringArray(_ name: String) throws(ErrorObject) -> [String]? {
        guard let value = value(name) else { return nil }
        guard case .array(let items) = value else { throw Params.invalid(name, "must be an array of strings, not \(value.typeName)") }
        var strings: [String] = []
        for (index, item) in items.enumerated() {
            guard case .string(let text) = item else {
                throw Params.invalid(name, "must be an array of strings (item \(index) is \(item.typeName))")
            }
            strings.append(text)
        }
        return strings
    }

    func requiredStringArray(_ name: String) throws(ErrorObject) -> [String] {
        guard let strings = try stringArray(name) else { throw Params.invalid(name, "is required (an array of strings)") }
        return strings
    }

    /// A required param whose value may be a string or null (setSelectedProvider's `mvpdId`).
    func requiredNullableString(_ name: String) throws(ErrorObject) -> String? {
        guard let value = object[name] else { throw Params.invalid(name, "is required (a string or null)") }
        switch value {
        case .null: return nil
        case .string(let text): return text
        default: throw Params.invalid(name, "must be a string or null, not \(value.typeName)")
        }
    }
}
