import ArgumentParser
import EventStore
import Foundation

struct Append: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Append one event to a stream.",
        discussion: """
            Data must be valid JSON (default {}). Prints the event's position and the stream's \
            version; with --json one object {"position":P,"stream":S,"version":V}. Appending an \
            event whose --id is already recorded with the same content prints the original \
            position and writes nothing.
            """)

    @OptionGroup var store: StoreOptions

    @Argument(help: "The stream to append to.")
    var stream: String

    @Argument(help: "The event's type.")
    var type: String

    @Option(help: ArgumentHelp("The event's data: JSON text, @FILE to read a file, or - to read standard input.", valueName: "JSON|@FILE|-"))
    var data: String = "{}"

    @Option(help: ArgumentHelp("The event's metadata, as JSON.", valueName: "JSON"))
    var metadata: String?

    @Option(help: ArgumentHelp("The event's id (a UUID), to make retries idempotent.", valueName: "UUID"))
    var id: String?

    @Option(name: .customLong("expected-version"), help: ArgumentHelp("any, no-stream, exists, or the stream's current version N.", valueName: "VERSION"))
    var expectedVersion: ExpectedVersionOption = .init(.any)

    @Flag(help: "Print the result as JSON.")
    var json = false

    func run() async throws {
        try await reportingErrors {
            let event = NewEvent(
                id: try parseID(), type: type, data: try InputText.json(data, what: "--data"),
                metadata: try metadata.map { try InputText.json($0, what: "--metadata") } ?? Data())
            let store = try self.store.open()
            defer { store.close() }
            let result = try await store.append(to: stream, events: [event], expectedVersion: expectedVersion.value)
            let position = result.positions[0]
            if json {
                var object = JSONObjectWriter()
                object.add("position", position)
                object.add("stream", result.stream)
                object.add("version", result.version)
                object.add("alreadyRecorded", result.alreadyRecorded)
                Console.print(object.finish())
            } else {
                let note = result.alreadyRecorded ? " (already recorded; nothing written)" : ""
                Console.print("position \(position), stream \(result.stream) at version \(result.version)\(note)")
            }
        }
    }

    private func parseID() throws -> UUID? {
        guard let id else { return nil }
        guard let uuid = UUID(uuidString: id) else {
            throw CLIError(.invalidInput, "The id '\(id)' is not a UUID; give one like 6f1c1a52-8a2b-4c3d-9e4f-0a1b2c3d4e5f.")
        }
        return uuid
    }
}

/// `--expected-version any|no-stream|exists|N`.
struct ExpectedVersionOption: ExpressibleByArgument {
    let value: ExpectedVersion

    init(_ value: ExpectedVersion) {
        self.value = value
    }

    init?(argument: String) {
        switch argument {
        case "any": value = .any
        case "no-stream": value = .noStream
        case "exists": value = .streamExists
        default:
            guard let number = UInt64(argument) else { return nil }
            value = .exact(number)
        }
    }

    var defaultValueDescription: String { "any" }
}

/// Reads JSON given on the command line, from a file (@FILE) or from standard input (-).
enum InputText {
    static func bytes(_ argument: String, what: String) throws -> Data {
        if argument == "-" {
            return FileHandle.standardInput.readDataToEndOfFile()
        }
        if argument.hasPrefix("@") {
            let path = String(argument.dropFirst())
            guard let contents = FileManager.default.contents(atPath: path) else {
                throw CLIError(.invalidInput, "Cannot read the file '\(path)' given to \(what); check the path.")
            }
            return contents
        }
        return Data(argument.utf8)
    }

    /// The bytes of `argument` (text, @FILE or -), checked to be one JSON value.
    static func json(_ argument: String, what: String) throws -> Data {
        let data = try bytes(argument, what: what)
        do {
            try JSONScanner.validate([UInt8](data))
        } catch {
            throw CLIError(.invalidInput, "The \(what) value is not valid JSON (\(error)); give a JSON value such as {\"goal\":400}.")
        }
        return data
    }
}
