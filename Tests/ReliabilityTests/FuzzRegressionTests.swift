import EventStore
import Foundation
import FuzzChecks
import Testing
import TestSupport
import WireFormat

/// Replays every seed and every input the fuzzer ever found (scripts/fuzz.sh writes crashers to
/// Fuzz/Regressions/<target>/) through the same checks the fuzz targets run.
@Suite("Fuzz regressions")
struct FuzzRegressionTests {
    static let fuzzDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    static func inputs(_ target: String) throws -> [URL] {
        try ["Seeds", "Regressions"].flatMap { folder in
            let directory = fuzzDirectory.appendingPathComponent(folder).appendingPathComponent(target)
            return try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
                .filter { !$0.lastPathComponent.hasPrefix(".") }
        }
    }

    /// Each fuzz target's name, its check, and how many seeds it has at least.
    static let targets: [(name: String, check: @Sendable (UnsafeRawBufferPointer) throws -> Void, seeds: Int)] = [
        ("record", { try FuzzChecks.record($0) }, 5),
        ("event-line", { try FuzzChecks.eventLine($0) }, 5),
    ]

    @Test("every kept input decodes or parses, or is refused with the documented error, and round-trips", arguments: [0, 1])
    func keptInputs(target: Int) throws {
        let (name, check, seeds) = Self.targets[target]
        let inputs = try Self.inputs(name)
        #expect(inputs.count >= seeds, "the seeds of \(name) are missing")
        for input in inputs {
            let bytes = try Data(contentsOf: input)
            #expect(throws: Never.self, "\(name): \(input.lastPathComponent)") { try bytes.withUnsafeBytes { try check($0) } }
        }
    }

    @Test("the checks find what they look for: a broken encoder, a broken canonical line")
    func checksAreNotVacuous() throws {
        let seed = try Data(contentsOf: Self.fuzzDirectory.appendingPathComponent("Seeds/record/walk.bin"))
        // Given a valid record, the check passes with the real encoder...
        #expect(throws: Never.self) { try [UInt8](seed).withUnsafeBytes { try FuzzChecks.record($0) } }
        // ...and finds the fault of an encoder that drops the last data byte.
        let dropping = { (event: RecordedEvent) throws(EventStoreError) -> [UInt8] in
            try RecordFormat.encode(RecordedEvent(
                position: event.position, stream: event.stream, version: event.version, id: event.id, type: event.type,
                data: event.data.dropLast(), metadata: event.metadata, recordedAtMicroseconds: event.recordedAtMicroseconds))
        }
        let record = #expect(throws: FuzzChecks.Finding.self) { try [UInt8](seed).withUnsafeBytes { try FuzzChecks.record($0, encode: dropping) } }
        #expect(record?.description == "a decoded record encodes to other bytes")
        // A record whose data length lies is refused as damaged, which the check accepts.
        var lying = [UInt8](seed)
        lying[43] &+= 1
        #expect(throws: Never.self) { try lying.withUnsafeBytes { try FuzzChecks.record($0) } }

        // Given a valid line, the check passes with the real canonical writer...
        let line = Array(#"{"stream":"s","type":"T","data":{"a":1}}"#.utf8)
        #expect(throws: Never.self) { try line.withUnsafeBytes { try FuzzChecks.eventLine($0) } }
        // ...and finds the fault of one that writes another stream.
        let renaming = { (parsed: EventLine) in FuzzChecks.canonicalLine(parsed).replacingOccurrences(of: #""stream":"s""#, with: #""stream":"t""#) }
        let finding = #expect(throws: FuzzChecks.Finding.self) { try line.withUnsafeBytes { try FuzzChecks.eventLine($0, canonical: renaming) } }
        #expect(finding?.description == "the canonical line parses to another event")
        // Lines that are not events are refused, not crashed, which the check accepts.
        for bad in ["{", #"{"stream":1,"type":"T","data":{}}"#, #"{"stream":"s","type":"T","data":"*","dataEncoding":"base64"}"#] {
            #expect(throws: Never.self, "\(bad)") { try Array(bad.utf8).withUnsafeBytes { try FuzzChecks.eventLine($0) } }
        }
    }

    @Test("the apps hold under every kept program: nothing traps, refusals are the apps' own, rebuild equals live")
    func appPrograms() async throws {
        let inputs = try Self.inputs("apps")
        #expect(inputs.count >= 8, "the seeds of apps are missing")
        for input in inputs {
            let bytes = try Data(contentsOf: input)
            do {
                try await FuzzChecks.apps([UInt8](bytes))
            } catch {
                Issue.record("apps: \(input.lastPathComponent): \(error)")
            }
        }
    }

    @Test("the apps hold under 200 random programs (a brief run of the apps' fuzz target, seeded)")
    func randomAppPrograms() async throws {
        var random = SeededGenerator(seed: 20_261_123)
        var total = FuzzChecks.AppsRun()
        for round in 0..<200 {
            let program = (0..<Int.random(in: 50...600, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            do {
                let run = try await FuzzChecks.apps(program)
                total.operations += run.operations
                total.refused += run.refused
                total.events += run.events
                total.passedOver += run.passedOver
            } catch {
                Issue.record("program \(round) (\(program.count) bytes: \(program.prefix(40))...): \(error)")
            }
        }
        // Not vacuous: the programs record, refuse and poison in earnest.
        #expect(total.operations > 10_000 && total.refused > 2_000 && total.events > 3_000 && total.passedOver > 100, "\(total)")
    }
}
