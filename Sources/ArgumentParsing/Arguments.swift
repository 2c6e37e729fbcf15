/// A command line split by swift-argument-parser's conventions: `--name value` or `--name=value` for an option
/// with a value (repeatable), bare `--name` for a flag, anything else a positional argument. `-h`, `--help` and
/// `--version` are not parsed here: ``CommandLineProgram`` answers them first, wherever they appear.
public struct Arguments: Sendable {
    /// Each option with a value, in command-line order.
    public private(set) var options: [(name: String, value: String)] = []
    public private(set) var flags: Set<String> = []
    public private(set) var positionals: [String] = []

    /// - Parameters:
    ///   - valued: the options that take a value.
    ///   - flags: the options that take none.
    ///   - positionals: how many positional arguments are allowed.
    /// - Throws: ``UsageError`` for an unknown option, a missing value (the next word starting with `-`, other than
    ///   `-` alone, is an option, not the value), a value given to a flag, or one positional argument too many.
    public init(_ arguments: [String], valued: Set<String>, flags known: Set<String>, positionals limit: Int = 0) throws(UsageError) {
        var index = 0
        while index < arguments.count {
            var name = arguments[index]
            var inline: String?
            if name.hasPrefix("--"), let equals = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            index += 1
            if valued.contains(name) {
                if let inline {
                    options.append((name, inline))
                } else {
                    guard index < arguments.count else { throw UsageError("\(name) needs a value") }
                    let value = arguments[index]
                    // swift-argument-parser's rule: the next word is an option, not this one's value (`--socket
                    // --stdio`); a value that does start with `-` is given as `--name=value`.
                    guard !value.hasPrefix("-") || value == "-" else {
                        throw UsageError("\(name) needs a value, got the option \(value) (write \(name)=\(value) if it is the value)")
                    }
                    options.append((name, value))
                    index += 1
                }
            } else if known.contains(name) {
                guard inline == nil else { throw UsageError("\(name) takes no value") }
                flags.insert(name)
            } else if name.hasPrefix("-") && name != "-" {
                throw UsageError("unknown option \(name)")
            } else {
                guard positionals.count < limit else { throw UsageError("unexpected argument \(name)") }
                positionals.append(name)
            }
        }
    }

    /// The value of the last `name` given, or nil.
    public func value(_ name: String) -> String? {
        options.last { $0.name == name }?.value
    }

    /// Every value given to `name`, in order.
    public func values(_ name: String) -> [String] {
        options.filter { $0.name == name }.map(\.value)
    }

    /// True when the flag `name` was given.
    public func has(_ name: String) -> Bool { flags.contains(name) }

    /// Seconds as a person writes them, in whole milliseconds: digits with at most one point (`5`, `0.25`, `.5`,
    /// `5.`) and at most three decimals that are not 0; nil for anything else, for a fraction of a millisecond
    /// (`0.0005`, `3600.0000000000000001`: refused, not rounded) and beyond a billion seconds. `Double(_:)` would
    /// also take `0x10` (16), `1e1`, `+5`, `inf` and `nan`.
    public static func milliseconds(_ text: String) -> Int64? {
        let digit = UInt8(ascii: "0")...UInt8(ascii: "9")
        let bytes = Array(text.utf8)
        let point = bytes.firstIndex(of: UInt8(ascii: "."))
        let whole = bytes[..<(point ?? bytes.endIndex)].drop { $0 == UInt8(ascii: "0") }
        var fraction = point.map { Array(bytes[($0 + 1)...]) } ?? []
        guard bytes.count > (point == nil ? 0 : 1), (whole + fraction).allSatisfy(digit.contains) else { return nil }
        while fraction.last == UInt8(ascii: "0") { fraction.removeLast() }
        guard whole.count <= 9, fraction.count <= 3 else { return nil }
        let padded = whole + fraction + Array(repeating: UInt8(ascii: "0"), count: 3 - fraction.count)
        return padded.reduce(0) { $0 * 10 + Int64($1 - UInt8(ascii: "0")) }
    }
}

/// A usage error: one line on stderr with a pointer to `--help`, exit status 2.
public struct UsageError: Error, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
}
