import EventStore
import Projections

/// Renders a query's JSON for people: scalar members as aligned "name  value" lines, arrays of
/// objects as tables with a header, nested objects with dotted names.
enum JSONText {
    static func render(_ value: JSONValue) -> [String] {
        var scalars: [(String, String)] = []
        var sections: [String] = []
        collect(value, path: "", scalars: &scalars, sections: &sections)
        let width = scalars.map(\.0.count).max() ?? 0
        var lines = scalars.map { $0.0.padded(to: width + 2) + $0.1 }
        for section in sections {
            if !lines.isEmpty { lines.append("") }
            lines.append(contentsOf: section.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
        }
        return lines
    }

    private static func collect(_ value: JSONValue, path: String, scalars: inout [(String, String)], sections: inout [String]) {
        switch value {
        case let .object(members):
            if members.isEmpty && !path.isEmpty { scalars.append((path, "(none)")) }
            for (key, member) in members {
                let name = TerminalText.safe(key)
                collect(member, path: path.isEmpty ? name : "\(path).\(name)", scalars: &scalars, sections: &sections)
            }
        case let .array(elements):
            let rows = elements.compactMap { element -> [(String, JSONValue)]? in
                if case let .object(members) = element { return members }
                return nil
            }
            if rows.count == elements.count && !rows.isEmpty {
                sections.append(table(title: path, rows))
            } else if elements.isEmpty {
                scalars.append((path.isEmpty ? "items" : path, "(none)"))
            } else {
                scalars.append((path, elements.map(scalar).joined(separator: ", ")))
            }
        default:
            scalars.append((path.isEmpty ? "value" : path, scalar(value)))
        }
    }

    private static func table(title: String, _ rows: [[(String, JSONValue)]]) -> String {
        var columns: [String] = []
        for row in rows {
            for (key, _) in row where !columns.contains(key) { columns.append(key) }
        }
        let cells = rows.map { row in columns.map { column in row.first { $0.0 == column }.map { scalar($0.1) } ?? "" } }
        let headers = columns.map(header)
        let widths = columns.indices.map { index in max(headers[index].count, cells.map { $0[index].count }.max() ?? 0) }
        func line(_ values: [String]) -> String {
            zip(values, widths).map { $0.padded(to: $1) }.joined(separator: "  ")
                .trimmingTrailingSpaces()
        }
        var lines: [String] = []
        if !title.isEmpty { lines.append("\(title):") }
        lines.append(line(headers))
        lines.append(contentsOf: cells.map(line))
        return lines.joined(separator: "\n")
    }

    /// "firstPosition" as "FIRST POSITION".
    private static func header(_ key: String) -> String {
        var text = ""
        for character in key {
            if character.isUppercase && !text.isEmpty { text.append(" ") }
            text.append(character)
        }
        return text.uppercased()
    }

    /// A value as one cell's text, made safe for a terminal (so its width is what is shown).
    private static func scalar(_ value: JSONValue) -> String {
        switch value {
        case .null: return "-"
        case let .string(text): return TerminalText.safe(text)
        case .object, .array: return value.serialized
        default: return value.serialized
        }
    }
}

extension String {
    /// The text followed by spaces up to `width` characters; never cut.
    func padded(to width: Int) -> String {
        self + String(repeating: " ", count: max(0, width - count))
    }

    func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
