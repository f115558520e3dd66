import Apps
import EventStore
import Foundation
import Projections
import Testing

@Suite("Row keys and values")
struct RowsTests {
    @Test("string and number parts sort as their values do, NUL bytes and all")
    func keyOrder() {
        let strings = ["", "a", "a\u{0}", "a\u{0}b", "ab", "b", "é", "\u{0}"]
        let sortedByKey = strings.sorted { RowKey($0) < RowKey($1) }
        #expect(sortedByKey == strings.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        let numbers: [UInt64] = [0, 1, 255, 256, 65_535, 1 << 40, .max]
        #expect(numbers.shuffled().sorted { RowKey($0) < RowKey($1) } == numbers)
        // A composite key: the first part decides before the second.
        #expect(RowKey("a").appending(UInt64.max) < RowKey("ab").appending(0))
        #expect(RowKey("site").appending(2) < RowKey("site").appending(10))
        // Signed parts sort as signed numbers.
        let signed = [Int.min, -256, -1, 0, 1, 255, Int.max]
        #expect(signed.shuffled().sorted { RowKey($0) < RowKey($1) } == signed)
        #expect(RowKey("site", 2) < RowKey("site", 10) && RowKey("a", Int.max) < RowKey("ab", Int.min))
    }

    @Test("parts read back what was appended, and refuse another shape")
    func parts() throws {
        let key = RowKey("camp\u{0}ground").appending(UInt64(15)).appending("Johnny Appleseed")
        #expect(key == RowKey("camp\u{0}ground", UInt64(15), "Johnny Appleseed"))
        #expect(key.parts([.string, .number, .string]) == [.string("camp\u{0}ground"), .number(15), .string("Johnny Appleseed")])
        #expect(key.parts([.string, .number]) == nil)
        #expect(key.parts([.number, .string, .string]) == nil)
        // Typed: the shape is the types asked for.
        let typed = try #require(key.decode(String.self, UInt64.self, String.self))
        #expect(typed.0 == "camp\u{0}ground" && typed.1 == 15 && typed.2 == "Johnny Appleseed")
        #expect(key.decode(String.self, UInt64.self) == nil)
        #expect(key.decode(String.self) == nil)
        let signed = try #require(RowKey("list", -42).decode(String.self, Int.self))
        #expect(signed.0 == "list" && signed.1 == -42)
        #expect(RowKey("list", -42).bytes == Array("list".utf8) + [0, 1, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xD6])
        #expect(RowKey(bytes: [0, 2]).decode(String.self) == nil)
        #expect(RowKey("x").hasPrefix(RowKey()) && RowKey("x").appending(1).hasPrefix(RowKey("x")) && !RowKey("xy").hasPrefix(RowKey("x")))
    }

    struct Sample: RowValue, Equatable {
        var id: UInt64
        var name: String
        var score: Double
        var flags: [Bool]
        var note: String?

        func encode(to writer: inout RowWriter) {
            writer.write(id)
            writer.write(name)
            writer.write(score)
            writer.write(flags)
            writer.write(note)
        }

        init(id: UInt64, name: String, score: Double, flags: [Bool], note: String?) {
            (self.id, self.name, self.score, self.flags, self.note) = (id, name, score, flags, note)
        }

        init(from reader: inout RowReader) throws(RowDecodingError) {
            id = try reader.read(UInt64.self)
            name = try reader.read(String.self)
            score = try reader.read(Double.self)
            flags = try reader.read([Bool].self)
            note = try reader.read(String?.self)
        }
    }

    @Test("values encode to exactly the documented bytes and decode back")
    func valueEncoding() throws {
        let sample = Sample(id: 1, name: "é", score: 1.5, flags: [true, false], note: nil)
        #expect(sample.encoded == [
            0, 0, 0, 0, 0, 0, 0, 1,  // id
            0, 0, 0, 2, 0xC3, 0xA9,  // "é"
            0x3F, 0xF8, 0, 0, 0, 0, 0, 0,  // 1.5
            0, 0, 0, 2, 1, 0,  // [true, false]
            0,  // nil
        ])
        #expect(try Sample(decoding: sample.encoded) == sample)
        let noted = Sample(id: 2, name: "", score: -0.0, flags: [], note: "n")
        #expect(try Sample(decoding: noted.encoded) == noted)
        #expect(Int(-2).encoded == [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE])
    }

    @Test("truncated, overlong or malformed bytes are errors, not crashes")
    func decodingErrors() {
        let bytes = Sample(id: 1, name: "abc", score: 2, flags: [true], note: "x").encoded
        for cut in 0..<bytes.count {
            #expect(throws: RowDecodingError.self) { try Sample(decoding: bytes.prefix(cut)) }
        }
        #expect(throws: RowDecodingError.self) { try Sample(decoding: bytes + [0]) }
        #expect(throws: RowDecodingError.self) { try Bool(decoding: [2]) }
        #expect(throws: RowDecodingError.self) { try String(decoding: [0, 0, 0, 2, 0xFF, 0xFE]) }
        #expect(throws: RowDecodingError.self) { try [Int](decoding: [0xFF, 0xFF, 0xFF, 0xFF]) }
    }

    @Test("a Codable value is a row by declaring it: its fields in declaration order, in the row encoding")
    func codableRows() throws {
        struct Point: Codable, Equatable, Sendable, RowValue {
            var y: Int
            var x: Int
            var label: String?
        }
        let point = Point(y: 2, x: 1, label: nil)
        var expected = RowWriter()
        expected.write(2)
        expected.write(1)
        expected.write(String?.none)
        #expect(point.encoded == expected.bytes)
        #expect(try Point(decoding: point.encoded) == point)
        #expect(try Point(decoding: Point(y: -1, x: .max, label: "é").encoded) == Point(y: -1, x: .max, label: "é"))
    }

    @Test("a row whose Codable conformance throws stops its projection; no part of it is stored")
    func unwritableRow() async throws {
        struct Unwritable: Codable, Sendable, RowValue {
            struct Refused: Error {}
            init() {}
            init(from decoder: any Decoder) throws { throw Refused() }
            func encode(to encoder: any Encoder) throws { throw Refused() }
        }
        struct Keeper: Projection {
            let name = "keeper"
            let version = 1
            let tables = ["rows"]
            let eventTypes: Set<String>? = nil
            let errorPolicy = ProjectionErrorPolicy.skip
            let queryParameters: [QueryParameter] = []
            func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
                try state.put("rows", RowKey(event.position), Unwritable())
            }
            func query(_ state: some StateReader, _ parameters: QueryParameters) async throws -> JSONValue { .null }
        }
        let f = try ProjectionFixture()
        _ = try await f.store.append(to: "s", events: [event("A")])
        let runner = try await ProjectionRunner(store: f.store, projections: [Keeper()])
        let message = "The projection 'keeper' put a row in 'rows' that cannot be stored: a Unwritable cannot be written as a row: Refused()."
        let error = await #expect(throws: ProjectionError.self) { try await runner.catchUp() }
        #expect(error?.code == .invalidDefinition && error?.message == message)
        let status = try #require(try await runner.statuses().first)
        #expect(status.checkpoint == 0)
        #expect(status.failure == message)
        #expect(try await runner.storedHash(of: "keeper") == (try await StateHash.of(Keeper(), in: ProjectionState(for: Keeper()).reader)))
    }

    @Test("JSON values parse and serialize compactly, in member order")
    func jsonValues() throws {
        let text = #"{ "b": [1, 2.5, -3e2, true, null], "a": {"s": "q\"\u00e9\n"} }"#
        let value = try JSONValue(parsing: Array(text.utf8))
        #expect(value.serialized == #"{"b":[1,2.5,-300,true,null],"a":{"s":"q\"é\n"}}"#)
        #expect(value["b"]?.arrayValue?.count == 5)
        #expect(value["a"]?["s"]?.stringValue == "q\"é\n")
        #expect(throws: JSONError.self) { try JSONValue(parsing: Array("[1,]".utf8)) }
        #expect(throws: JSONError.self) { try JSONValue(parsing: Array(String(repeating: "[", count: 600).utf8)) }
    }
}
