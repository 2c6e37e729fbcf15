@testable import AccessEnabler
import Foundation
import XCTest

/// The engine's state table, `Sources/AccessEnabler/README.md` ("The table"), run against the machine: every cell
/// that can happen, its state reached from a fresh machine by events only (`NamedState`), its event sent
/// (`NamedEvent`), the actions returned and the state after compared with what the cell says. The README is the one
/// copy of the table; no engine, no network, no sleeps.
final class EngineMachineTableTests: XCTestCase {
    func testEveryCellOfTheTableIsWhatTheMachineDoes() throws {
        let readme = try ReadmeTable.load()
        XCTAssertEqual(readme.columns, NamedEvent.allCases.map(\.rawValue), "the README's columns")
        XCTAssertEqual(readme.rows.map(\.name), NamedState.allCases.map(\.rawValue), "the README's rows")
        for row in readme.rows {
            guard let state = NamedState(rawValue: row.name) else { continue }
            XCTAssertEqual(state.machine.summary, row.summary, "row \(row.name): the state reached")
            XCTAssertEqual(row.cells.count, readme.columns.count, "row \(row.name): one cell per column")
            for (column, text) in zip(readme.columns, row.cells) where text != ReadmeTable.cannotHappen {
                guard let event = NamedEvent(rawValue: column) else { continue }
                XCTAssertEqual(text, ReadmeTable.cell(state, event), "cell (\(row.name), \(column))")
            }
        }
    }

    /// The actions the table names are the machine's: each is the name of a case, a member or a method of the
    /// engine (`Sources/AccessEnabler/Engine/`), none a word of the table alone.
    func testEveryActionTheTableNamesExistsInTheEngine() throws {
        let readme = try ReadmeTable.load()
        let engine = try FileManager.default.contentsOfDirectory(
            at: ReadmeTable.root.appendingPathComponent("Sources/AccessEnabler/Engine"),
            includingPropertiesForKeys: nil
        ).map { try String(contentsOf: $0, encoding: .utf8) }.joined()
        let words = Set(engine.split { !($0.isLetter || $0.isNumber) }.map(String.init))
        var named = Set<String>()
        for row in readme.rows {
            for text in row.cells where text != ReadmeTable.cannotHappen && text != "-" {
                let actions = text.components(separatedBy: " → ")[0]
                guard actions != "-" else { continue }
                for action in actions.components(separatedBy: ", ") { named.insert(String(action.prefix { $0 != " " })) }
            }
        }
        XCTAssertFalse(named.isEmpty)
        for action in named.sorted() {
            XCTAssertTrue(words.contains(action), "the table's action \(action) is named nowhere in the engine")
        }
    }
}

/// The Markdown table under "## The table" of the README: its columns (the events) and its rows.
struct ReadmeTable {
    struct Row {
        /// The bold part of the first cell: a `NamedState`'s raw value.
        let name: String
        /// The code part of the first cell: the state as `Machine.summary` prints it.
        let summary: String
        /// The other cells' text, as written.
        let cells: [String]
    }

    struct Malformed: Error, CustomStringConvertible {
        let description: String
    }

    let columns: [String]
    let rows: [Row]

    init(markdown: String) throws {
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false)
        guard let heading = lines.firstIndex(of: "## The table") else { throw Malformed(description: "no \"## The table\"") }
        let table = lines[(heading + 1)...].drop { !$0.hasPrefix("|") }.prefix { $0.hasPrefix("|") }.map(Self.cells)
        guard table.count > 2 else { throw Malformed(description: "no table under \"## The table\"") }
        columns = table[0].dropFirst().map(Self.unquoted)
        rows = try table.dropFirst(2).map { cells in
            let label = cells[0]
            guard label.hasPrefix("**"), let end = label.dropFirst(2).range(of: "**") else {
                throw Malformed(description: "row \(label): its first cell is not **name** `state`")
            }
            return Row(
                name: String(label[label.index(label.startIndex, offsetBy: 2)..<end.lowerBound]),
                summary: Self.unquoted(label[end.upperBound...]), cells: Array(cells.dropFirst()))
        }
    }

    static let cannotHappen = "cannot happen"

    /// The repository's root.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func load() throws -> ReadmeTable {
        try ReadmeTable(markdown: String(contentsOf: root.appendingPathComponent("Sources/AccessEnabler/README.md"), encoding: .utf8))
    }

    /// What the machine does in `state` for `event`, written as the table writes a cell: the actions (`-`: none,
    /// else separated by ", ") and, when the state changes, " → " and the state after in backticks.
    static func cell(_ state: NamedState, _ event: NamedEvent) -> String {
        var machine = state.machine
        let before = machine.summary
        let actions = event.send(to: &machine)
        let after = machine.summary
        return (actions.isEmpty ? "-" : actions.joined(separator: ", ")) + (after == before ? "" : " → `\(after)`")
    }

    /// The cells of a `| a | b |` line, trimmed.
    private static func cells(_ line: Substring) -> [String] {
        line.trimmingCharacters(in: .whitespaces).dropFirst().dropLast().split(separator: "|", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
    }

    private static func unquoted(_ text: some StringProtocol) -> String {
        text.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "`"))
    }
}
