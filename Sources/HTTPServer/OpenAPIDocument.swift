import AppModules
import EventStore
import Foundation

/// The OpenAPI 3.1 document a server serves at `GET /openapi.yaml`: the generic part
/// (`Sources/HTTPServer/OpenAPI/openapi.yaml`, compiled into the binary) composed with each
/// served app module's part (``AppModule/openAPI``, or the paths of its commands written from
/// their declared fields). `docs/openapi.yaml` is the document of the shipped esctl, written by
/// `scripts/openapi.sh`.
enum OpenAPIDocument {
    /// The generic part: every route that is not an app's.
    static let generic = String(decoding: PackageResources.openapi_yaml, as: UTF8.self)

    /// The document for `apps`, whose `commands` are served, and the served `parts`' own routes
    /// (``AppServerParts/openAPI``). Throws ``ServerError`` with
    /// ``ServerError/Code/invalidConfiguration`` for a part that is not in the shape
    /// ``AppModule/openAPI`` says, or that names a path or component the document has already.
    static func compose(apps: AppSet, commands: [RoutedCommand], parts served: [any AppServerParts] = []) throws(ServerError) -> String {
        var parts: [(app: String, text: String)] = []
        for module in apps.modules {
            if let text = module.openAPI {
                parts.append((module.name, text))
            } else {
                let own = commands.filter { $0.module == module.name }
                if !own.isEmpty { parts.append((module.name, OpenAPICommandPaths.yaml(own))) }
            }
        }
        for part in served {
            if let text = part.openAPI { parts.append((part.app, text)) }
        }
        return try OpenAPIComposition.compose(generic, parts)
    }
}

/// Inserts app modules' YAML parts into a document's `paths` and `components` sections, by
/// lines: the document's sections are found by their indentation (a top-level `paths:` and
/// `components:`, with `schemas:`, `responses:` and `parameters:` two spaces in).
enum OpenAPIComposition {
    /// The sections a part may have, and where each goes.
    static let sections = ["paths", "schemas", "responses", "parameters"]

    static func compose(_ document: String, _ parts: [(app: String, text: String)]) throws(ServerError) -> String {
        var lines = document.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var operations = Set(operationIDs(in: lines[...]))
        for part in parts {
            let entries = try split(part.text, app: part.app)
            for id in entries.values.flatMap({ operationIDs(in: $0[...]) }) {
                guard operations.insert(id).inserted else {
                    throw ServerError(
                        .invalidConfiguration,
                        "The OpenAPI part of the app '\(part.app)' has the operationId '\(id.prefix(80))', which the document has already; give each operation an id of its own.")
                }
            }
            // From the last section of the document to the first, so that the lines found stay where they were.
            let places = try sections.map { section throws(ServerError) in (section, try place(of: section, in: lines)) }
                .sorted { $0.1.end > $1.1.end }
            for (section, place) in places {
                guard let added = entries[section], !added.isEmpty else { continue }
                let indent = section == "paths" ? "" : "  "
                var existing = Set(keys(in: lines[(place.start + 1)..<place.end], indent: place.entryIndent))
                for key in keys(in: added[...], indent: 2) where !existing.insert(key).inserted {
                    throw ServerError(
                        .invalidConfiguration, "The OpenAPI part of the app '\(part.app)' names \(section) '\(key.prefix(80))', which the document has already.")
                }
                lines.insert(contentsOf: added.map { $0.isEmpty ? $0 : indent + $0 }, at: place.end)
            }
        }
        return lines.joined(separator: "\n")
    }

    /// A part's lines by section, each entry line as the part wrote it: a section's entries
    /// indented exactly two spaces, what they hold more; blank lines kept (a block scalar's
    /// paragraphs). Throws for a top-level key that is not a section, a line before the first,
    /// a section whose first line is not indented two spaces, a tab or a carriage return.
    static func split(_ text: String, app: String) throws(ServerError) -> [String: [String]] {
        var entries: [String: [String]] = [:]
        var current: String?
        let refuse = { (problem: String) in
            ServerError(.invalidConfiguration, "The OpenAPI part of the app '\(app)' \(problem).")
        }
        guard !text.unicodeScalars.contains("\r") else { throw refuse("has carriage returns; end its lines with line feeds only") }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.trimmingCharacters(in: .whitespaces).isEmpty {
                if let section = current, entries[section] != nil { entries[section, default: []].append("") }
                continue
            }
            guard !line.prefix(while: { $0 == " " || $0 == "\t" }).contains("\t") else { throw refuse("indents a line with a tab; use spaces") }
            if !line.hasPrefix(" ") {
                let key = line.hasSuffix(":") ? String(line.dropLast()) : line
                guard sections.contains(key) else {
                    throw refuse("has '\(String(line.prefix(40)))' at the top; it may have only paths, schemas, responses and parameters")
                }
                current = key
                continue
            }
            guard let section = current else { throw refuse("has a line before its first section") }
            if entries[section] == nil {
                guard indentation(line) == 2 else { throw refuse("indents the first entry of \(section) by \(indentation(line)) spaces, not 2") }
            }
            entries[section, default: []].append(line)
        }
        // Blank lines at a section's end stay out of the document.
        for (section, lines) in entries {
            entries[section] = Array(lines.reversed().drop(while: \.isEmpty).reversed())
        }
        return entries
    }

    /// The values of the `operationId:` lines among `lines`, without quotes.
    static func operationIDs(in lines: ArraySlice<String>) -> [String] {
        lines.compactMap { line in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("operationId:") else { return nil }
            return unquoted(String(trimmed.dropFirst("operationId:".count)).trimmingCharacters(in: .whitespaces))
        }
    }

    /// Where a section's entries are in the document: its heading line, the line after its last
    /// entry, and its entries' indentation.
    struct Place {
        let start: Int
        let end: Int
        let entryIndent: Int
    }

    static func place(of section: String, in lines: [String]) throws(ServerError) -> Place {
        let heading: Int?
        let indent: Int
        if section == "paths" {
            heading = lines.firstIndex(of: "paths:")
            indent = 0
        } else {
            let components = lines.firstIndex(of: "components:") ?? lines.count
            heading = lines[components...].firstIndex(of: "  \(section):")
            indent = 2
        }
        guard let heading else {
            throw ServerError(.internalError, "The server's OpenAPI document has no section \(section).")
        }
        var end = heading + 1
        while end < lines.count, lines[end].isEmpty || indentation(lines[end]) > indent { end += 1 }
        // Blank lines at the end of a section stay after what is inserted.
        while end > heading + 1, lines[end - 1].isEmpty { end -= 1 }
        return Place(start: heading, end: end, entryIndent: indent + 2)
    }

    /// The keys of the entries among `lines`: the lines indented exactly `indent` spaces, each
    /// key without its quotes, its colon and what follows (a flow value, a comment).
    static func keys(in lines: ArraySlice<String>, indent: Int) -> [String] {
        lines.filter { indentation($0) == indent && !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            .map { line in
                let text = line.trimmingCharacters(in: .whitespaces)
                if let quote = text.first, quote == "\"" || quote == "'", let end = text.dropFirst().firstIndex(of: quote) {
                    return String(text[text.index(after: text.startIndex)..<end])
                }
                // A plain key ends at its first ": " or at a colon that ends the line.
                if let range = text.range(of: ": ") { return String(text[..<range.lowerBound]) }
                return text.hasSuffix(":") ? String(text.dropLast()) : text
            }
    }

    /// A scalar without its quotes (a JSON-quoted one read back; a plain one as it is).
    static func unquoted(_ text: String) -> String {
        if text.hasPrefix("\""), let data = text.data(using: .utf8), let value = try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed) as? String {
            return value
        }
        if text.count >= 2, text.hasPrefix("'"), text.hasSuffix("'") { return String(text.dropFirst().dropLast()) }
        return text
    }

    static func indentation(_ line: String) -> Int {
        line.prefix { $0 == " " }.count
    }
}

/// The paths of commands whose module wrote none, from their declared fields.
enum OpenAPICommandPaths {
    /// A `paths:` part with one `POST /apps/{app}/{command}` per command.
    static func yaml(_ commands: [RoutedCommand]) -> String {
        var lines = ["paths:"]
        for routed in commands {
            let command = routed.command
            let required = command.fields.filter(\.required).map { quoted($0.name) }
            lines += [
                "  \(routed.path):",
                "    post:",
                "      operationId: \(quoted(operationID(routed)))",
                "      summary: \(quoted(command.summary.isEmpty ? "The command \(command.name) of the app \(routed.module)." : command.summary))",
                "      requestBody:",
                "        required: \(!required.isEmpty)",
                "        content:",
                "          application/json:",
                "            schema:",
                "              type: object",
                "              additionalProperties: false",
            ]
            if !required.isEmpty { lines.append("              required: [\(required.joined(separator: ", "))]") }
            if command.fields.isEmpty {
                lines.append("              properties: {}")
            } else {
                lines.append("              properties:")
                for field in command.fields {
                    // An integer is an Int64 (AppInput refuses the rest); say so, so clients send none other.
                    let bounds = field.kind == .integer ? ", minimum: \(Int64.min), maximum: \(Int64.max)" : ""
                    lines.append("                \(quoted(field.name)): { type: \(field.kind.openAPIType)\(bounds), description: \(quoted(field.summary)) }")
                }
            }
            lines.append("      responses:")
            for (status, response) in responses {
                lines.append("        \"\(status)\": { $ref: \"#/components/responses/\(response)\" }")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// What any command may answer.
    static let responses = [
        ("200", "AppAnswer"), ("201", "AppAnswer"), ("400", "BadRequest"), ("401", "Unauthorized"), ("404", "NotFound"),
        ("408", "RequestTimeout"), ("409", "Conflict"), ("410", "Tombstoned"), ("413", "PayloadTooLarge"), ("415", "UnsupportedMediaType"),
        ("422", "Refused"),
    ]

    /// `notes` and `add-note` give `notesAddNote`.
    static func operationID(_ routed: RoutedCommand) -> String {
        let words = (routed.app + "-" + routed.command.name).split(separator: "-").map(String.init)
        return (words.first ?? "") + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    /// Text as a YAML scalar: a JSON string, which YAML reads as it is, with the characters YAML
    /// forbids even there (C1 controls, U+FFFE, U+FFFF) escaped too.
    static func quoted(_ text: String) -> String {
        var result = ""
        for scalar in JSONValue.string(text).serialized.unicodeScalars {
            if (0x80...0x9F).contains(scalar.value) || scalar.value == 0xFFFE || scalar.value == 0xFFFF {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

extension AppField.Kind {
    /// The JSON Schema type of the kind.
    var openAPIType: String {
        switch self {
        case .string: return "string"
        case .integer: return "integer"
        case .number: return "number"
        case .boolean: return "boolean"
        }
    }
}
