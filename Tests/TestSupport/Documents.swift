import Foundation

/// The repository's documents, for tests that keep them true.
public enum Documents {
    /// The repository root (three levels above this file).
    public static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The text of a document, by its path from the root.
    public static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The fenced block that follows the marker `<!-- name -->`: how documents mark the parts
    /// that tests compare with the code.
    public static func block(named name: String, in document: String) -> String? {
        guard let marker = document.range(of: "<!-- \(name) -->"),
            let open = document.range(of: "```\n", range: marker.upperBound..<document.endIndex),
            let close = document.range(of: "```", range: open.upperBound..<document.endIndex)
        else { return nil }
        return String(document[open.upperBound..<close.lowerBound])
    }
}
