/// One command-line option, declared once as swift-argument-parser's `@Option` and `@Flag` are: its name, the
/// placeholder of its value (none for a flag), its help, the default `--help` shows and what it does to the
/// `Options` being built. An ``OptionTable`` of them gives the usage text, the split of the command line and the
/// parse; nothing about an option is written anywhere else.
public struct OptionDeclaration<Options, Failure: Error>: Sendable {
    public let name: String
    /// The value's placeholder in the usage (`PATH`, `SECONDS`); nil for a flag.
    public let valueName: String?
    /// One paragraph, wrapped by the usage; the default is added after it.
    public let help: String
    /// The default shown after the help, read from the options a parse starts from; nil (or a nil result) shows
    /// none, an empty string shows `(default)` alone, as for the flag that is the default choice.
    public let shownDefault: (@Sendable (Options) -> String?)?
    /// Applies one value (nil for a flag) to the options.
    let apply: @Sendable (inout Options, String?) throws(Failure) -> Void

    /// An option taking a value, `--name VALUE` or `--name=VALUE`; `parse` runs once per occurrence, in
    /// command-line order (so the last one wins unless `parse` collects them).
    public static func option(
        _ name: String, _ valueName: String, help: String, default shown: (@Sendable (Options) -> String?)? = nil,
        parse: @escaping @Sendable (inout Options, String) throws(Failure) -> Void
    ) -> Self {
        Self(name: name, valueName: valueName, help: help, shownDefault: shown) { (options, value) throws(Failure) in
            try parse(&options, value ?? "")
        }
    }

    /// A flag, bare `--name`; `set` runs once when it is given, however often.
    public static func flag(
        _ name: String, help: String, default shown: (@Sendable (Options) -> String?)? = nil,
        set: @escaping @Sendable (inout Options) throws(Failure) -> Void
    ) -> Self {
        Self(name: name, valueName: nil, help: help, shownDefault: shown) { (options, _) throws(Failure) in try set(&options) }
    }

    /// `--name VALUE`, or `--name` for a flag, as the usage shows it.
    public var label: String { valueName.map { "\(name) \($0)" } ?? name }
}

/// A command line's options in titled sections, from which the usage text (``usage(defaults:)``) and the parse
/// (``parse(_:into:positionals:)``) both come. `-h`/`--help` and `--version` are not declared:
/// ``CommandLineProgram`` answers them first; the usage lists them at the end of the last section.
public struct OptionTable<Options, Failure: Error>: Sendable {
    public struct Section: Sendable {
        /// The heading, e.g. `TRANSPORT`.
        public let title: String
        /// Positional arguments, shown before the options as `(NAME, help)`; the parse leaves them to the caller.
        public let arguments: [(name: String, help: String)]
        public let options: [OptionDeclaration<Options, Failure>]
        /// Lines shown as they are after the entries (a section about something else than options).
        public let text: String?

        public init(
            _ title: String, arguments: [(name: String, help: String)] = [], _ options: [OptionDeclaration<Options, Failure>],
            text: String? = nil
        ) {
            self.title = title
            self.arguments = arguments
            self.options = options
            self.text = text
        }
    }

    public let sections: [Section]
    /// Pairs of options that cannot be given together (`A and B cannot be combined`).
    public let exclusive: [(String, String)]
    /// How a usage error becomes a `Failure`.
    let usageFailure: @Sendable (UsageError) -> Failure

    public init(
        _ sections: [Section], exclusive: [(String, String)] = [], usageFailure: @escaping @Sendable (UsageError) -> Failure
    ) {
        self.sections = sections
        self.exclusive = exclusive
        self.usageFailure = usageFailure
    }

    /// Every option, in usage order.
    public var declarations: [OptionDeclaration<Options, Failure>] { sections.flatMap(\.options) }
    /// The options that take a value.
    public var valued: Set<String> { Set(declarations.filter { $0.valueName != nil }.map(\.name)) }
    /// The options that take none.
    public var flags: Set<String> { Set(declarations.filter { $0.valueName == nil }.map(\.name)) }

    /// Splits `arguments` (``Arguments``), checks the exclusive pairs, then applies the flags given (in table
    /// order) and each option's values (in command-line order) to `options`.
    /// - Returns: the split, for its positional arguments.
    /// - Throws: the declarations' `Failure`, or a ``UsageError`` turned into one: an unknown option, a missing
    ///   value, a value given to a flag, an unexpected positional argument, two exclusive options.
    @discardableResult
    public func parse(_ arguments: [String], into options: inout Options, positionals: Int = 0) throws(Failure) -> Arguments {
        let parsed: Arguments
        do throws(UsageError) {
            parsed = try Arguments(arguments, valued: valued, flags: flags, positionals: positionals)
        } catch {
            throw usageFailure(error)
        }
        for (first, second) in exclusive where given(first, in: parsed) && given(second, in: parsed) {
            throw usageFailure(UsageError("\(first) and \(second) cannot be combined"))
        }
        let byName = Dictionary(declarations.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for declaration in declarations where declaration.valueName == nil && parsed.has(declaration.name) {
            try declaration.apply(&options, nil)
        }
        for (name, value) in parsed.options {
            try byName[name]?.apply(&options, value)
        }
        return parsed
    }

    private func given(_ name: String, in parsed: Arguments) -> Bool {
        parsed.has(name) || parsed.value(name) != nil
    }

    /// The sections as `--help` shows them, a blank line between two: each heading, then one entry per positional
    /// argument and option, its label in the first `column` characters and its help (with the default read from
    /// `defaults`) wrapped to `width` (a label too long for the column puts the help on the next line), then the
    /// section's own text. `-h, --help` and `--version` end the last section.
    public func usage(defaults: Options, width: Int = 110, column: Int = 30) -> String {
        var text = ""
        for (index, section) in sections.enumerated() {
            var entries = section.arguments.map { ($0.name, $0.help) }
            entries += section.options.map { declaration in
                var help = declaration.help
                if let shown = declaration.shownDefault?(defaults) {
                    help += shown.isEmpty ? " (default)" : " (default: \(shown))"
                }
                return (declaration.label, help)
            }
            if index == sections.count - 1 {
                entries += [("-h, --help", "Show this help."), ("--version", "Show the version.")]
            }
            if index > 0 { text += "\n" }
            text += "\(section.title):\n"
            for (label, help) in entries {
                text += Self.entry(label: label, help: help, width: width, column: column)
            }
            text += section.text ?? ""
        }
        return text
    }

    private static func entry(label: String, help: String, width: Int, column: Int) -> String {
        let indent = String(repeating: " ", count: column)
        var lines: [String] = []
        var line = "  " + label
        if line.count + 2 > column {
            lines.append(line)
            line = indent
        } else {
            line += String(repeating: " ", count: column - line.count)
        }
        var empty = true
        for word in help.split(separator: " ") {
            if !empty && line.count + 1 + word.count > width {
                lines.append(line)
                line = indent
                empty = true
            }
            line += (empty ? "" : " ") + word
            empty = false
        }
        lines.append(line)
        return lines.joined(separator: "\n") + "\n"
    }
}

extension OptionTable where Failure == UsageError {
    public init(_ sections: [Section], exclusive: [(String, String)] = []) {
        self.init(sections, exclusive: exclusive) { $0 }
    }
}
