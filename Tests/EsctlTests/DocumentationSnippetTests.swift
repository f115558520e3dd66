import Foundation
import Testing
import TestSupport

/// Every Swift block of the README, of the documents its text moved to, and of the DocC articles
/// compiles: it appears, word for word (leading white space and `import` lines aside), in the
/// Examples package, which `make test` builds. Package.swift fragments (blocks that start with
/// `.package(`) are the exception.
@Suite("Documentation snippets")
struct DocumentationSnippetTests {
    /// The ```swift blocks of a document, each as its lines.
    static func swiftBlocks(in document: String) -> [[String]] {
        var blocks: [[String]] = []
        var current: [String]?
        for line in document.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if current == nil {
                if trimmed == "```swift" { current = [] }
            } else if trimmed == "```" {
                blocks.append(current ?? [])
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// Lines without leading white space, `import` lines and blank lines, as one text.
    static func comparable(_ lines: [String]) -> String {
        lines.map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("import ") }
            .joined(separator: "\n")
    }

    /// Every Swift source of the Examples package, as comparable text.
    static func exampleSources() throws -> String {
        let root = Documents.root.appendingPathComponent("Examples")
        var texts: [String] = []
        for folder in ["Sources", "Tests"] {
            let base = root.appendingPathComponent(folder)
            guard let files = FileManager.default.enumerator(atPath: base.path) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") {
                let text = try String(contentsOf: base.appendingPathComponent(file), encoding: .utf8)
                texts.append(comparable(text.components(separatedBy: "\n")))
            }
        }
        return texts.joined(separator: "\n")
    }

    /// The documents beside the catalogs whose Swift blocks are checked: the README and what
    /// moved out of it.
    static let markdownDocuments = ["README.md", "docs/esctl.md", "docs/http.md", "docs/testing.md", "Sources/Apps/README.md"]

    /// Those documents and every DocC article.
    static func documents() throws -> [(path: String, text: String)] {
        var documents = try markdownDocuments.map { (path: $0, text: try Documents.text($0)) }
        let sources = Documents.root.appendingPathComponent("Sources")
        for module in try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted() {
            let catalog = sources.appendingPathComponent(module).appendingPathComponent("\(module).docc")
            guard let files = try? FileManager.default.contentsOfDirectory(atPath: catalog.path) else { continue }
            for file in files.sorted() where file.hasSuffix(".md") {
                let path = "Sources/\(module)/\(module).docc/\(file)"
                documents.append((path, try Documents.text(path)))
            }
        }
        return documents
    }

    @Test("every Swift block of the README, the documents beside it and the DocC articles is in the Examples package, which builds")
    func blocksCompile() throws {
        let sources = try Self.exampleSources()
        var checked = 0
        for document in try Self.documents() {
            for block in Self.swiftBlocks(in: document.text) {
                let text = Self.comparable(block)
                if text.hasPrefix(".package(") || text.isEmpty { continue }
                checked += 1
                #expect(sources.contains(text), "\(document.path): this block is not in Examples/ word for word:\n\(block.joined(separator: "\n"))")
            }
        }
        #expect(checked >= 5, "only \(checked) Swift blocks were found")
    }

    @Test("the checker sees a changed block")
    func checkerFails() throws {
        let sources = try Self.exampleSources()
        let block = Self.swiftBlocks(in: try Documents.text("README.md")).first { !Self.comparable($0).hasPrefix(".package(") } ?? []
        #expect(sources.contains(Self.comparable(block)))
        #expect(!sources.contains(Self.comparable(block + ["let changed = true"])))
    }
}
