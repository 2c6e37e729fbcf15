/// A command-line usage error: one line for stderr, exit 2.
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// Options split the way `passbridge` splits them: `--name value` or `--name=value` for valued options, bare
/// `--name` for flags, anything else a positional argument (at most `positionals` of them).
struct Arguments {
    private(set) var values: [String: String] = [:]
    private(set) var flags: Set<String> = []
    private(set) var positionals: [String] = []

    init(_ arguments: [String], valued: Set<String>, flags known: Set<String>, positionals limit: Int) throws(UsageError) {
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
                    values[name] = inline
                } else {
                    guard index < arguments.count else { throw UsageError("\(name) needs a value") }
                    values[name] = arguments[index]
                    index += 1
                }
            } else if known.contains(name) {
                guard inline == nil else { throw UsageError("\(name) takes no value") }
                flags.insert(name)
            } else if name.hasPrefix("-") {
                throw UsageError("unknown option \(name)")
            } else {
                guard positionals.count < limit else { throw UsageError("unexpected argument \(name)") }
                positionals.append(name)
            }
        }
    }
}
