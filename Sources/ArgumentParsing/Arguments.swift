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

    /// A decimal number as a person writes seconds: digits with at most one point (`5`, `0.25`, `.5`, `5.`), or nil.
    /// `Double(_:)` alone would also take `0x10` (16), `1e1`, `+5`, `inf` and `nan`.
    public static func decimal(_ text: String) -> Double? {
        var digits = 0
        var points = 0
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digits += 1
            case UInt8(ascii: "."): points += 1
            default: return nil
            }
        }
        return digits > 0 && points <= 1 ? Double(text) : nil
    }
}

/// A usage error: one line on stderr with a pointer to `--help`, exit status 2.
public struct UsageError: Error, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
}
