@testable import AccessEnabler
import Foundation
import XCTest

/// The engine's state table tested as a table: every cell of `EngineMachineTable` against the machine, and the
/// table of `Sources/AccessEnabler/README.md` ("The table") against `EngineMachineTable`, cell by cell. No engine,
/// no network, no sleeps.
final class EngineMachineTableTests: XCTestCase {
    /// Each cell: its state reached from a fresh machine by events only, its event sent, the actions returned and
    /// the state after compared with the table. "Cannot happen" cells are preconditions and are not run.
    func testEveryCellOfTheTable() {
        for row in EngineMachineTable.states {
            XCTAssertEqual(row.state.machine.summary, row.summary, "row \(row.state.rawValue): the state reached")
        }
        for cell in EngineMachineTable.cells {
            guard case .actions(let actions, let after) = cell.expected else { continue }
            var machine = cell.state.machine
            let before = machine.summary
            XCTAssertEqual(cell.event.send(to: &machine), actions, "\(cell.position): the actions")
            XCTAssertEqual(machine.summary, after ?? before, "\(cell.position): the state after")
            XCTAssertNotEqual(after, before, "\(cell.position): the state does not change, so the table names none after")
        }
    }

    /// The table has one cell for each named state × event, rows in `NamedState`'s order.
    func testTableHasEachCellOnce() {
        XCTAssertEqual(EngineMachineTable.states.map(\.state), NamedState.allCases)
        var seen = Set<String>()
        for cell in EngineMachineTable.cells {
            XCTAssertTrue(seen.insert(cell.position).inserted, "\(cell.position): twice in EngineMachineTable.cells")
        }
        for state in NamedState.allCases {
            for event in NamedEvent.allCases {
                let position = EngineMachineTable.Cell.cannotHappen(state, event).position
                XCTAssertTrue(seen.contains(position), "\(position): missing from EngineMachineTable.cells")
            }
        }
    }

    /// The README's table and `EngineMachineTable` say the same: the same columns, the same rows with the same
    /// states, and in each cell the same actions and state after. A cell, row or column in one and not the other
    /// fails.
    func testReadmeTableIsTheCodeTable() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try ReadmeTable(
            markdown: String(contentsOf: root.appendingPathComponent("Sources/AccessEnabler/README.md"), encoding: .utf8))
        XCTAssertEqual(readme.columns, NamedEvent.allCases.map(\.rawValue), "the README's columns")
        XCTAssertEqual(readme.rows.map(\.name), EngineMachineTable.states.map(\.state.rawValue), "the README's rows")
        let summaries = Dictionary(uniqueKeysWithValues: EngineMachineTable.states.map { ($0.state.rawValue, $0.summary) })
        var code = Dictionary(EngineMachineTable.cells.map { ($0.position, $0.expected) }, uniquingKeysWith: { first, _ in first })
        for row in readme.rows {
            XCTAssertEqual(row.summary, summaries[row.name], "README row \(row.name): its state")
            XCTAssertEqual(row.cells.count, readme.columns.count, "README row \(row.name): one cell per column")
            for (column, text) in zip(readme.columns, row.cells) {
                let position = "cell (\(row.name), \(column))"
                guard let expected = code.removeValue(forKey: position) else {
                    XCTFail("\(position): in the README, not in EngineMachineTable.cells")
                    continue
                }
                XCTAssertEqual(
                    ReadmeTable.expectation(text), expected,
                    "\(position): the README has \(text), EngineMachineTable has \(expected.markdown)")
            }
        }
        for position in code.keys.sorted() {
            XCTFail("\(position): in EngineMachineTable.cells, not in the README")
        }
    }
}

/// The Markdown table under "## The table" of the README: its columns (the events) and its rows.
private struct ReadmeTable {
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

    /// One cell's text as an expectation: `cannot happen`, or the actions (`-`: none, else separated by ", ") and,
    /// after " → ", the state after in backticks.
    static func expectation(_ text: String) -> EngineMachineTable.Expectation {
        if text == "cannot happen" { return .cannotHappen }
        var actions = Substring(text)
        var after: String?
        if let arrow = text.range(of: " → ") {
            actions = text[..<arrow.lowerBound]
            after = unquoted(text[arrow.upperBound...])
        }
        return .actions(actions == "-" ? [] : actions.components(separatedBy: ", "), after: after)
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

extension EngineMachineTable.Expectation {
    /// The cell as the README writes it.
    var markdown: String {
        switch self {
        case .cannotHappen: "cannot happen"
        case .actions(let actions, let after):
            (actions.isEmpty ? "-" : actions.joined(separator: ", ")) + (after.map { " → `\($0)`" } ?? "")
        }
    }
}
