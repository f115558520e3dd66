import Foundation
import FuzzChecks
import Testing

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

    @Test("the checks find what they look for: a record whose lengths lie, a line that is not JSON")
    func checksAreNotVacuous() throws {
        // Given a valid record seed, when its data length is one more than the bytes hold, then
        // the decoder refuses it (the check passes because the refusal is the documented one).
        let seed = try Data(contentsOf: Self.fuzzDirectory.appendingPathComponent("Seeds/record/walk.bin"))
        var lying = [UInt8](seed)
        lying[43] &+= 1
        #expect(throws: Never.self) { try lying.withUnsafeBytes { try FuzzChecks.record($0) } }
        // A record with a nonzero flag decodes, and encodes back with the flag cleared.
        var flagged = [UInt8](seed)
        flagged[1] = 0x80
        #expect(throws: Never.self) { try flagged.withUnsafeBytes { try FuzzChecks.record($0) } }
        // Lines: not JSON, a wrong type, a bad base64 value: refused, not crashed.
        for line in ["{", #"{"stream":1,"type":"T","data":{}}"#, #"{"stream":"s","type":"T","data":"*","dataEncoding":"base64"}"#] {
            #expect(throws: Never.self, "\(line)") { try Array(line.utf8).withUnsafeBytes { try FuzzChecks.eventLine($0) } }
        }
    }
}
