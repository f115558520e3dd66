import EventStore
import EventStoreTesting
import Foundation
import HTTPServer
import HummingbirdTesting
import Testing
import TestSupport

/// `POST /append/stream`: appends as they come over one request, each line answered in order.
@Suite("streamed appends: one request, a line an append, a line an answer")
struct AppendStreamTests {
    /// A chunk of a chunked body holding `text`.
    static func chunk(_ text: String) -> String {
        String(text.utf8.count, radix: 16) + "\r\n" + text + "\r\n"
    }

    static let head = RawConnection.request(
        "POST", "/append/stream", headers: ["Transfer-Encoding: chunked", "Content-Type: application/x-ndjson", "Connection: keep-alive"])

    /// The answer lines received so far: the JSON objects of the chunked body, in order.
    static func answers(_ text: String) -> [String] {
        text.components(separatedBy: "\r\n").filter { $0.hasPrefix(#"{"line":"#) }.map { $0.trimmingCharacters(in: .newlines) }
    }

    @Test("each line is appended and answered before the next is read; a bad line, a conflict and a line too long answer their errors and leave the rest; blank lines get no answer")
    func linesAnsweredInOrder() async throws {
        var options = ServerOptions(port: 0)
        options.maxBodyBytes = 300
        try await ServerFixture.with(options: options, testing: .live) { server, client in
            let port = try #require(client.port, "the live test client has a port")
            let connection = try await RawConnection.open(port: port)
            // Given a streamed request whose first line is an append
            try await connection.send(Self.head + Self.chunk(#"{"stream":"orders-1","type":"Placed","data":{"n":1}}"# + "\n"))
            // Then its answer comes while the request is still open, and the event is stored
            try await connection.waitForText(#"{"line":1,"#)
            #expect(try await server.store.headPosition() == 1)
            #expect(RawConnection.status(connection.text) == 200, "\(connection.text)")

            // When the next lines come, split across chunks: bad JSON, a conflict, a blank line,
            // a line over the limit of 300 bytes, and two good lines (the last without a newline)
            let long = #"{"stream":"orders-1","type":"Placed","data":{"note":""# + String(repeating: "x", count: 400) + #""}}"#
            try await connection.send(Self.chunk("{nope\n" + #"{"stream":"orders-1","type":"Paid","expectedVersion":5}"# + "\n\n"))
            try await connection.send(Self.chunk(String(long.prefix(200))) + Self.chunk(String(long.dropFirst(200)) + "\n"))
            try await connection.send(Self.chunk(#"{"stream":"orders-2","type":"Placed"}"# + "\n" + #"{"stream":"orders-1","type":"Paid","#))
            try await connection.send(Self.chunk(#""expectedVersion":1}"#) + "0\r\n\r\n")
            let text = try await connection.waitForText(#"{"line":7,"#)
            try await connection.waitForText("\r\n0\r\n\r\n")

            // Then every line but the blank one is answered, in order, each with its outcome
            let answers = Self.answers(connection.text)
            #expect(answers.count == 6, "\(text)")
            #expect(answers.first == #"{"line":1,"stream":"orders-1","version":1,"positions":[1],"alreadyRecorded":false}"#)
            #expect(answers.dropFirst(1).first?.hasPrefix(#"{"line":2,"status":400,"#) == true, "\(answers)")
            #expect(answers.dropFirst(2).first?.hasPrefix(#"{"line":3,"status":409,"#) == true, "\(answers)")
            #expect(answers.dropFirst(2).first?.contains(#""code":"versionConflict""#) == true, "\(answers)")
            #expect(answers.dropFirst(3).first?.hasPrefix(#"{"line":5,"status":413,"#) == true, "\(answers)")
            #expect(answers.dropFirst(4).first == #"{"line":6,"stream":"orders-2","version":1,"positions":[2],"alreadyRecorded":false}"#)
            #expect(answers.dropFirst(5).first == #"{"line":7,"stream":"orders-1","version":2,"positions":[3],"alreadyRecorded":false}"#)
            // And the store holds exactly the three good lines
            let events = try await server.store.read(from: 1, through: .max, limit: 10, filter: EventFilter())
            #expect(events.map { "\($0.stream) \($0.version) \($0.type)" } == ["orders-1 1 Placed", "orders-2 1 Placed", "orders-1 2 Paid"])
            await connection.close()
        }
    }

    @Test("a streamed body's parts are timed one after another (and from each answer), not as a whole: a stream that keeps sending outlives the body timeout, one that falls silent is cut")
    func bodyTimeoutPerPart() async throws {
        var options = ServerOptions(port: 0)
        // (8 s: a part's slack over the 0.4 s pause is then 7.6 s, more than a loaded machine
        // starves the test's tasks)
        options.bodyTimeout = .seconds(8)
        options.idleTimeout = .seconds(60)
        try await ServerFixture.with(options: options, testing: .live) { server, client in
            let port = try #require(client.port, "the live test client has a port")
            let connection = try await RawConnection.open(port: port)
            // Given a stream that sends a line 0.4 s after each answer, 24 times: longer than the
            // body timeout in all
            try await connection.send(Self.head)
            for n in 1...24 {
                try await connection.send(Self.chunk(#"{"stream":"s-1","type":"Tick"}"# + "\n"))
                try await connection.waitForText(#"{"line":\#(n),"#)
                try await Task.sleep(for: .milliseconds(400))
            }
            // Then every line was appended and the connection is still open
            #expect(try await server.store.headPosition() == 24)
            #expect(!connection.isClosed, "\(connection.text)")
            // When it then sends nothing, it is cut (the wait is a failure detector; the timeout is 8 s)
            try await connection.waitForClose("the server to cut a streamed body that fell silent", timeout: .seconds(60))
            #expect(try await server.store.headPosition() == 24)
        }
    }

    @Test("a streamed body that is refused (no token: 401) is timed as a whole again: a client trickling bytes into it is cut after the body timeout")
    func refusedStreamTimedAsAWhole() async throws {
        var options = ServerOptions(port: 0, token: "s3cret-0123456789")
        options.bodyTimeout = .seconds(2)
        options.idleTimeout = .seconds(60)
        try await ServerFixture.with(options: options, testing: .live) { server, client in
            let port = try #require(client.port, "the live test client has a port")
            let connection = try await RawConnection.open(port: port)
            // Given a streamed append without the token, answered 401
            try await connection.send(Self.head)
            try await connection.waitForText("401")
            // When the client keeps trickling a byte into its body every 0.4 s (for 30 s at most)
            for _ in 0..<75 where !connection.isClosed {
                try? await connection.send(Self.chunk(" "))
                try await Task.sleep(for: .milliseconds(400))
            }
            // Then the server cut it (its parts no longer move the deadline), and wrote nothing
            #expect(connection.isClosed, "the connection of a refused streamed body was still open after 30 s")
            #expect(try await server.store.headPosition() == 0)
        }
    }
}
