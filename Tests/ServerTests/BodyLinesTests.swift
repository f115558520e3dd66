import Hummingbird
import NIOCore
import Testing

@testable import HTTPServer

/// The lines of a streamed body, however its chunks fall.
@Suite("a streamed body's lines, bounded, across chunks")
struct BodyLinesTests {
    /// The lines of a body that arrives in `chunks`, each line as text or `nil` when too long.
    static func lines(_ chunks: [String], limit: Int) async throws -> [String?] {
        let stream = AsyncStream<ByteBuffer> { continuation in
            for chunk in chunks { continuation.yield(ByteBuffer(string: chunk)) }
            continuation.finish()
        }
        let body = RequestBody(asyncSequence: stream)
        var lines = BodyLines(body, limit: limit)
        var found: [String?] = []
        while let line = try await lines.next() {
            switch line {
            case let .text(bytes): found.append(String(decoding: bytes, as: UTF8.self))
            case .tooLong: found.append(nil)
            }
        }
        return found
    }

    @Test("newlines at a chunk's start or end, a \\r split from its \\n, blank lines and a last line without its newline")
    func chunkBoundaries() async throws {
        // Given lines cut at every awkward place
        let found = try await Self.lines(["ab", "c\n", "\nde\r", "\nf", "g\r\n", "h"], limit: 10)
        // Then each line is whole, without its \r or \n, and the blank one is there to skip
        #expect(found == ["abc", "", "de", "fg", "h"])
    }

    @Test("a line of exactly the limit passes with \\n or \\r\\n; one byte more is too long, alone, and the lines after it are read")
    func theLimit() async throws {
        // Given lines at the limit of 4 bytes and one past it, in pieces
        let found = try await Self.lines(["abcd\n", "abcd\r\n", "abc", "de\r\n", "ok\n", "toolong"], limit: 4)
        // Then the lines at the limit pass, the longer ones are refused, the rest read on
        #expect(found == ["abcd", "abcd", nil, "ok", nil])
    }

    @Test("an empty body has no lines; a body of newlines has blank ones")
    func emptyBodies() async throws {
        #expect(try await Self.lines([], limit: 4) == [])
        #expect(try await Self.lines([""], limit: 4) == [])
        #expect(try await Self.lines(["\n\n"], limit: 4) == ["", ""])
    }
}
