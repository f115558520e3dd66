import ArgumentParser
import Commands
import EventStore
import Projections
import Foundation
import WireFormat

struct Append: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Append one event to a stream, or a batch of events to several streams atomically.",
        discussion: """
            Data must be valid JSON (default {}). Prints the event's position and the stream's \
            version; with --json one object {"position":P,"stream":S,"version":V,"alreadyRecorded":B} (and \
            "deleted":true for an id whose event was deleted since). Appending an \
            event whose --id is already recorded with the same content prints the original \
            position and writes nothing.

            With --batch FILE (or - for standard input), every line is one event, \
            {"stream":S,"type":T,"data":JSON?,"id":UUID?,"metadata":JSON?,"expectedVersion":V?,"schemaVersion":N?,"personal":[{"subject":S,"fields":[F,...]|null}]?,"tags":[T,...]?} \
            (data {} and schema version 1 when missing), and \
            all of them are appended in one atomic transaction (at most 10,000): every expectation \
            holds and every event is written, or nothing is. An expectedVersion ("any", \
            "no-stream", "exists" or a number) may be given on the first line of a stream and \
            applies to that stream. Events take positions in input order. One result per event is \
            printed in input order; with --json, \
            {"position":P,"stream":S,"version":V,"alreadyRecorded":B} per line. A malformed line is reported with its \
            number and nothing is written.

            With --track NAME:POSITION (a processor in another language that reacts to the event \
            at POSITION), the batch and NAME's tracking position commit in one transaction; when \
            NAME has already recorded POSITION or a later one, nothing is written and the exit \
            status is 65, as for a version conflict (a POSITION beyond the head is refused with \
            64). The batch may then be empty (an event that calls for no reaction): it prints \
            "tracking NAME at POSITION", or with --json {"name":NAME,"position":P}. `esctl \
            tracking NAME` prints the recorded position.

            Tags (--tag, or "tags":[T,...] in a line) are stored with the event and indexed: \
            `esctl replay --tag T` and `--query` find events by them. With --condition \
            {"failIfEventsMatch":[{"types":[...],"tags":[...]}],"after":P} the append is made only \
            if no event recorded after position P (the whole log without "after") matches the \
            query (any item; an item matches an event of one of its types, or any type when none \
            are given, that carries all of its tags); otherwise nothing is written, the exit status \
            is 65 and the message names the first matching position. A retry with the same ids \
            prints the original positions.
            """)

    @OptionGroup var store: WritingStoreOptions

    @Argument(help: "The stream to append to (not with --batch).")
    var stream: String?

    @Argument(help: "The event's type (not with --batch).")
    var type: String?

    @Option(help: ArgumentHelp("Append the NDJSON events of FILE (- for standard input) atomically.", valueName: "FILE|-"))
    var batch: String?

    @Option(
        help: ArgumentHelp("With --batch: record POSITION as processor NAME's tracking position in the same transaction.", valueName: "NAME:POSITION"),
        transform: TrackOption.parse)
    var track: TrackOption?

    @Option(help: ArgumentHelp("The event's data: JSON text, @FILE to read a file, or - to read standard input (default {}).", valueName: "JSON|@FILE|-"))
    var data: String?

    @Option(help: ArgumentHelp("The event's metadata: JSON text, @FILE to read a file, or - to read standard input.", valueName: "JSON|@FILE|-"))
    var metadata: String?

    @Option(help: ArgumentHelp("The event's id (a UUID), to make retries idempotent.", valueName: "UUID"))
    var id: String?

    @Option(
        name: .customLong("expected-version"), help: ArgumentHelp("any, no-stream, exists, or the stream's current version N.", valueName: "VERSION"),
        transform: ExpectedVersionOption.parse)
    var expectedVersion: ExpectedVersionOption?

    @Option(
        name: .customLong("schema-version"),
        help: ArgumentHelp("The version of the type's schema the data is written in, 1 to 65535 (default 1).", valueName: "N"))
    var schemaVersion: UInt16?

    @Option(
        help: ArgumentHelp(
            "Mark data personal to SUBJECT: its named top-level fields (SUBJECT=FIELD,FIELD), or the whole payload (SUBJECT). Stored encrypted; `esctl forget SUBJECT` forgets it. Repeatable.",
            valueName: "SUBJECT[=FIELDS]"),
        transform: Self.personalPart)
    var personal: [PersonalData] = []

    @Option(
        name: .customLong("tag"),
        help: ArgumentHelp("A tag for the event (up to 32, each at most 200 bytes), for queries and conditions. Repeatable.", valueName: "TAG"))
    var tags: [String] = []

    @Option(
        help: ArgumentHelp(
            "Append only if no event after \"after\" matches the query: {\"failIfEventsMatch\":[{\"types\":[...],\"tags\":[...]}],\"after\":P}, or @FILE.",
            valueName: "JSON|@FILE"))
    var condition: String?

    @Flag(help: "Print the result as JSON.")
    var json = false

    /// `SUBJECT=FIELD,FIELD` (split at the last `=`, since subjects such as `camper:C1` are free text) or `SUBJECT`.
    static func personalPart(_ text: String) throws -> PersonalData {
        guard let equals = text.lastIndex(of: "=") else { return PersonalData(subject: text) }
        let fields = text[text.index(after: equals)...].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard !fields.contains(where: \.isEmpty) else {
            throw ValidationError("--personal \(text): name the fields after =, separated by commas (or give the subject alone for the whole payload).")
        }
        return PersonalData(subject: String(text[..<equals]), fields: fields)
    }

    func validate() throws {
        if batch != nil {
            guard stream == nil, type == nil else {
                throw ValidationError("Give either STREAM and TYPE or --batch FILE, not both.")
            }
            guard data == nil, metadata == nil, id == nil, expectedVersion == nil, schemaVersion == nil, personal.isEmpty, tags.isEmpty else {
                throw ValidationError(
                    "With --batch, give data, metadata, ids, expected versions, schema versions, personal marks and tags in the file's lines.")
            }
            if track != nil && condition != nil {
                throw ValidationError("--condition and --track cannot go together; append the reaction on its tracking position alone.")
            }
        } else if track != nil {
            throw ValidationError("--track goes with --batch: a processor's reaction and its tracking position commit together.")
        } else if stream == nil || type == nil {
            throw ValidationError("Give a STREAM and a TYPE, or --batch FILE.")
        } else if schemaVersion == 0 {
            throw ValidationError("--schema-version takes a version from 1 to 65535; schema versions start at 1.")
        } else if condition == "-" {
            throw ValidationError("--condition takes JSON text or @FILE, not standard input.")
        } else if data == "-" && metadata == "-" {
            throw ValidationError("Only one of --data and --metadata can read standard input; give the other as text or @FILE.")
        }
    }

    func run() async throws {
        try await reportingErrors {
            if let batch {
                try await appendBatch(batch)
            } else {
                try await appendOne()
            }
        }
    }

    private func appendOne() async throws {
        guard let stream, let type else { return }
        let event = NewEvent(
            id: try parseID(), type: type, data: try InputText.json(data ?? "{}", what: "--data"),
            metadata: try metadata.map { try InputText.json($0, what: "--metadata") } ?? Data(), schemaVersion: schemaVersion ?? 1,
            personal: personal, tags: tags)
        let condition = try parseCondition()
        let store = try await self.store.open()
        return try await store.closingAfter {
            let part = StreamAppend(stream: stream, events: [event], expectedVersion: expectedVersion?.value ?? .any)
            let results = if let condition { try await store.append([part], condition: condition) } else { try await store.append([part]) }
            let result = results[0]
            printResult(
                position: result.positions[0], stream: result.stream, version: result.version, alreadyRecorded: result.alreadyRecorded,
                deleted: result.deleted)
        }
    }

    private func appendBatch(_ path: String) async throws {
        let batch = try EventBatch.read(LineReader(path: path), allowingEmpty: track != nil)
        let condition = try parseCondition()
        let store = try await self.store.open()
        return try await store.closingAfter {
            let results: [AppendResult]
            if let track {
                results = try await store.append(batch.appends, tracking: track.value)
                if batch.eventCount == 0 {
                    if json {
                        var object = JSONObjectWriter()
                        object.add("name", track.value.name)
                        object.add("position", track.value.position)
                        Console.printJSON(object.finish())
                    } else {
                        Console.print("tracking \(track.value.name) at \(track.value.position)")
                    }
                }
            } else if let condition {
                results = try await store.append(batch.appends, condition: condition)
            } else {
                results = try await store.append(batch.appends)
            }
            for (appendIndex, eventIndex) in batch.placements {
                let result = results[appendIndex]
                let position = result.positions[eventIndex]
                var version = result.version - UInt64(result.positions.count - 1 - eventIndex)
                var deleted = false
                if result.alreadyRecorded {
                    // The original events need not have had consecutive versions; a deleted one has none to show.
                    if let original = try await store.event(at: position) { version = original.version } else { deleted = result.deleted }
                }
                printResult(
                    position: position, stream: result.stream, version: version, alreadyRecorded: result.alreadyRecorded, deleted: deleted)
            }
        }
    }

    private func printResult(position: UInt64, stream: String, version: UInt64, alreadyRecorded: Bool, deleted: Bool) {
        if json {
            var object = JSONObjectWriter()
            object.add("position", position)
            object.add("stream", stream)
            object.add("version", version)
            object.add("alreadyRecorded", alreadyRecorded)
            if deleted { object.add("deleted", true) }
            Console.printJSON(object.finish())
        } else {
            let note =
                deleted
                ? " (already recorded and deleted since; nothing written)" : alreadyRecorded ? " (already recorded; nothing written)" : ""
            Console.print("position \(position), stream \(stream) at version \(version)\(note)")
        }
    }

    private func parseCondition() throws -> AppendCondition? {
        guard let condition else { return nil }
        return try QueryJSON.condition([UInt8](InputText.bytes(condition, what: "--condition")))
    }

    private func parseID() throws -> UUID? {
        guard let id else { return nil }
        guard let uuid = UUID(uuidString: id) else {
            throw CLIError(.invalidInput, "The id '\(id)' is not a UUID; give one like 6f1c1a52-8a2b-4c3d-9e4f-0a1b2c3d4e5f.")
        }
        return uuid
    }
}

/// `--track NAME:POSITION`: a processor's name and the position of the event it handled.
struct TrackOption {
    let value: TrackingPosition

    @Sendable static func parse(_ text: String) throws -> TrackOption {
        guard let colon = text.lastIndex(of: ":"), colon != text.startIndex,
            case let digits = text[text.index(after: colon)...], digits.allSatisfy({ ("0"..."9").contains($0) }),
            let position = UInt64(digits), position > 0
        else {
            throw ValidationError("--track takes NAME:POSITION, a processor's name and the position (1 or more) of the event it handled; '\(text)' is not one.")
        }
        return TrackOption(value: TrackingPosition(name: String(text[..<colon]), position: position))
    }
}

/// `--expected-version any|no-stream|exists|N`.
struct ExpectedVersionOption: ExpressibleByArgument {
    let value: ExpectedVersion

    init(_ value: ExpectedVersion) {
        self.value = value
    }

    init?(argument: String) {
        guard let value = ExpectedVersion(text: argument) else { return nil }
        self.value = value
    }

    var defaultValueDescription: String { "any" }

    /// Reads `--expected-version`, refusing anything else with a sentence naming what it takes.
    @Sendable static func parse(_ text: String) throws -> ExpectedVersionOption {
        guard let option = ExpectedVersionOption(argument: text) else {
            throw ValidationError(ExpectedVersion.refusal(of: text, as: "--expected-version"))
        }
        return option
    }
}

/// Reads JSON given on the command line, from a file (@FILE) or from standard input (-).
enum InputText {
    /// The bytes of `argument`; with `limit`, at most that many are read from a file or standard
    /// input, and more is an error (64) that says so.
    static func bytes(_ argument: String, what: String, limit: Int? = nil) throws -> Data {
        guard let limit else {
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
        let data: Data
        if argument == "-" {
            data = (try? FileHandle.standardInput.read(upToCount: limit + 1)) ?? Data()
        } else if argument.hasPrefix("@") {
            let path = String(argument.dropFirst())
            guard let file = FileHandle(forReadingAtPath: path), let read = try? file.read(upToCount: limit + 1) else {
                throw CLIError(.invalidInput, "Cannot read the file '\(path)' given to \(what); check the path.")
            }
            try? file.close()
            data = read
        } else {
            data = Data(argument.utf8)
        }
        if data.count > limit {
            throw CLIError(.invalidInput, "\(what.prefix(1).uppercased() + what.dropFirst()) is over \(limit >> 20) MiB; give less.")
        }
        return data
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
