import Foundation
import Testing
import TestSupport

/// Every ```console example of the README and of the documents its esctl text moved to, run as a
/// user would: each block in a fresh directory, its commands in order through bash, with the
/// built esctl on the PATH. The output must match the lines shown, with recorded times, ids and
/// hashes allowed to differ, and `...` standing for any text within a line or, on a line of its
/// own, for any number of lines.
@Suite("README examples")
struct ReadmeExampleTests {
    /// The documents whose console examples run, by their paths from the repository's root.
    static let documents = ["README.md", "docs/esctl.md", "Sources/Apps/README.md"]

    /// One command of an example and the output shown after it.
    struct Step: CustomStringConvertible {
        let command: String
        let expected: [String]
        var description: String { "$ \(command)" }
    }

    /// The console blocks of a document, as steps.
    static func examples(in document: String) -> [[Step]] {
        var blocks: [[Step]] = []
        var inBlock = false
        var steps: [Step] = []
        var command: String?
        var expected: [String] = []
        func flush() {
            if let command { steps.append(Step(command: command, expected: expected)) }
            command = nil
            expected = []
        }
        for line in document.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if !inBlock {
                if line == "```console" { inBlock = true }
                continue
            }
            if line == "```" {
                flush()
                blocks.append(steps)
                steps = []
                inBlock = false
            } else if line.hasPrefix("$ ") {
                flush()
                command = String(line.dropFirst(2))
            } else {
                expected.append(line)
            }
        }
        return blocks
    }

    /// Recorded times, ids and hashes replaced by placeholders.
    static func normalized(_ line: String) -> String {
        var line = line
        let patterns = [
            (#"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?Z"#, "<TIME>"),
            (#"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"#, "<ID>"),
            (#"[0-9a-f]{64}"#, "<HASH>"),
        ]
        for (pattern, placeholder) in patterns {
            line = line.replacingOccurrences(of: pattern, with: placeholder, options: .regularExpression)
        }
        return line
    }

    /// Whether `actual` matches `expected`, where `...` in an expected line is any text.
    static func lineMatches(_ expected: String, _ actual: String) -> Bool {
        guard expected.contains("...") else { return expected == actual }
        let parts = expected.components(separatedBy: "...").map(NSRegularExpression.escapedPattern(for:))
        return actual.range(of: "^" + parts.joined(separator: ".*") + "$", options: .regularExpression) != nil
    }

    /// Whether the lines match, a line `...` standing for any number of lines.
    static func linesMatch(_ expected: ArraySlice<String>, _ actual: ArraySlice<String>) -> Bool {
        guard let first = expected.first else { return actual.isEmpty }
        if first == "..." {
            let rest = expected.dropFirst()
            return (actual.startIndex...actual.endIndex).contains { linesMatch(rest, actual[$0...]) }
        }
        guard let line = actual.first, lineMatches(first, line) else { return false }
        return linesMatch(expected.dropFirst(), actual.dropFirst())
    }

    /// Runs the steps in one bash, in a fresh directory; returns each step's output lines.
    static func run(_ steps: [Step]) async throws -> [[String]] {
        let directory = try TemporaryDirectory(prefix: "readme-example")
        var script = "export PATH=\(ProcessRunner.productsDirectory.path):$PATH\nunset ESCTL_DB\nstatus=0\n"
        for (index, step) in steps.enumerated() {
            // Each command sees the previous one's exit status (for `echo $?`).
            script += "(exit $status); { \(step.command)\n} 2>&1; status=$?; printf '\\n@@@ \(index)\\n'\n"
        }
        let output = try await ProcessRunner.run(
            URL(fileURLWithPath: "/bin/bash"), ["-c", script], directory: directory.path, timeout: .seconds(120))
        var outputs: [[String]] = []
        var current: [String] = []
        for line in output.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("@@@ ") {
                outputs.append(current)
                current = []
            } else if !line.isEmpty {
                current.append(line)
            }
        }
        return outputs
    }

    @Test("every console example of the README, docs/esctl.md and the apps' README runs and prints what it shows")
    func readme() async throws {
        var blocks: [(document: String, steps: [Step])] = []
        for document in Self.documents {
            blocks += Self.examples(in: try Documents.text(document)).map { (document: document, steps: $0) }
        }
        #expect(blocks.count >= 4, "the console examples of \(Self.documents.joined(separator: ", ")) were not found")
        for (document, steps) in blocks {
            let outputs = try await Self.run(steps)
            try #require(outputs.count == steps.count, "the example starting with \(steps.first?.description ?? "?") did not run to its end")
            for (step, output) in zip(steps, outputs) {
                let expected = step.expected.filter { !$0.isEmpty }.map(Self.normalized)
                let actual = output.map(Self.normalized)
                #expect(
                    Self.linesMatch(expected[...], actual[...]),
                    "\(step) printed:\n\(output.joined(separator: "\n"))\nbut \(document) shows:\n\(step.expected.joined(separator: "\n"))")
            }
        }
    }

    @Test("the matcher: placeholders, ... within a line and on a line of its own")
    func matcher() {
        #expect(Self.normalized("2026-11-22T01:13:15.084587Z  01a200d0-844c-7000-9ade-401a565b9ad7") == "<TIME>  <ID>")
        #expect(Self.lineMatches(#"{"a":1,...}"#, #"{"a":1,"b":2}"#))
        #expect(!Self.lineMatches(#"{"a":1,...}"#, #"{"a":2,"b":2}"#))
        #expect(Self.linesMatch(["x", "...", "z"], ["x", "y", "y", "z"]))
        #expect(Self.linesMatch(["x", "...", "z"], ["x", "z"]))
        #expect(!Self.linesMatch(["x", "...", "z"], ["x", "y"]))
        #expect(!Self.linesMatch(["x"], ["x", "y"]))
    }
}
