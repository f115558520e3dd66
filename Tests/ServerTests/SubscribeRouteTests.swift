import AsyncHTTPClient
import EventStore
import EventStoreTesting
import Foundation
import HTTPServer
import Hummingbird
import HummingbirdTesting
import Testing
import WireFormat

@Suite("GET /subscribe: live streams as Server-Sent Events or NDJSON")
struct SubscribeRouteTests {
    static let sse = [("Accept", "text/event-stream")]

    /// Appends one event of `type` to `stream` and returns it as recorded.
    @discardableResult
    static func append(_ stream: String, _ type: String, to server: Server) async throws -> RecordedEvent {
        let result = try await server.store.append(to: stream, events: [NewEvent(type: type, data: Data("{\"n\":1}".utf8))])
        let event = try await server.store.event(at: result.positions[0])
        return try #require(event)
    }

    /// The Server-Sent Event of `event`.
    static func block(_ event: RecordedEvent) -> String { "id: \(event.position)\ndata: \(EventJSON.line(event))\n\n" }

    static func caughtUp(_ position: UInt64) -> String { "event: caughtUp\ndata: {\"through\":\(position)}\n\n" }

    static func port(_ client: any TestClientProtocol) throws -> Int { try #require(client.port) }

    @Test("SSE: catch-up events with their ids, one caughtUp, then live events as committed")
    func serverSentEvents() async throws {
        try await ServerFixture.with(testing: .live) { server, client in
            // Given two events in the log.
            let first = try await Self.append("orders-1", "OrderPlaced", to: server)
            let second = try await Self.append("users-1", "UserJoined", to: server)
            // When a client subscribes from the start as an event stream.
            let stream = try await LiveResponse.open(port: try Self.port(client), "/subscribe?from=start", headers: Self.sse)
            #expect(stream.status == 200)
            #expect(stream.headers["content-type"] == "text/event-stream")
            #expect(stream.headers["cache-control"] == "no-cache")
            // Then it gets both events, then word that it is live.
            let expected = Self.block(first) + Self.block(second) + Self.caughtUp(2)
            try await stream.waitForText("the catch-up and caughtUp", asLongAs: expected)
            #expect(stream.text == expected)
            // When another event is committed, then it arrives, and no second caughtUp.
            let third = try await Self.append("orders-1", "OrderPaid", to: server)
            let live = expected + Self.block(third)
            try await stream.waitForText("the live event at position 3", asLongAs: live)
            #expect(stream.text == live)
            #expect(server.openStreams.count == 1)
        }
    }

    @Test("SSE: a heartbeat comment after each interval of the server's clock without an event")
    func heartbeat() async throws {
        let clock = TestClock()
        try await ServerFixture.with(clock: clock, testing: .live) { server, client in
            // Given an idle stream from the end of an empty log.
            let stream = try await LiveResponse.open(port: try Self.port(client), "/subscribe", headers: Self.sse)
            try await stream.waitForText("caughtUp") { $0 == Self.caughtUp(0) }
            // When a heartbeat interval passes on the server's clock, then a heartbeat comes.
            try await clock.waitForSleepers(1)
            clock.advance(by: .seconds(15))
            var expected = Self.caughtUp(0) + ": heartbeat\n\n"
            try await stream.waitForText("the first heartbeat", asLongAs: expected)
            #expect(stream.text == expected)
            // When an event arrives within the next interval, then that interval has no heartbeat...
            try await clock.waitForSleepers(1)
            let event = try await Self.append("orders-1", "OrderPlaced", to: server)
            expected += Self.block(event)
            try await stream.waitForText("the event", asLongAs: expected)
            clock.advance(by: .seconds(15))
            // ...and the idle interval after it has one.
            try await clock.waitForSleepers(1)
            clock.advance(by: .seconds(15))
            expected += ": heartbeat\n\n"
            try await stream.waitForText("the heartbeat after an idle interval", asLongAs: expected)
            #expect(stream.text == expected)
        }
    }

    @Test("NDJSON without Accept: one event JSON per line; limit ends the response after N events")
    func ndjsonWithLimit() async throws {
        try await ServerFixture.with(testing: .live) { server, client in
            // Given three events, when a client asks for two from position 2 and then one more live.
            var events: [RecordedEvent] = []
            for type in ["A", "B", "C"] { events.append(try await Self.append("s-1", type, to: server)) }
            let stream = try await LiveResponse.open(port: try Self.port(client), "/subscribe?from=2&limit=3")
            #expect(stream.status == 200)
            #expect(stream.headers["content-type"] == "application/x-ndjson")
            try await stream.waitForText("two catch-up lines") { $0.split(separator: "\n").count >= 2 }
            events.append(try await Self.append("s-1", "D", to: server))
            // Then it gets positions 2, 3 and 4 as lines, and the response ends cleanly.
            let end = try await stream.waitForEnd("the end of the response after 3 events")
            #expect(end.failure == nil)
            #expect(stream.text == events[1...3].map { EventJSON.line($0) + "\n" }.joined())
            try await withTimeout(.seconds(10), "the stream's handler to end") { await server.openStreams.wait { $0 == 0 } }
            #expect(server.openStreams.count == 0)
        }
    }

    @Test("stream, category and type filter the events")
    func filters() async throws {
        try await ServerFixture.with(testing: .live) { server, client in
            // Given events of several streams and types.
            let placed = try await Self.append("orders-1", "OrderPlaced", to: server)
            _ = try await Self.append("users-1", "UserJoined", to: server)
            let paid2 = try await Self.append("orders-2", "OrderPaid", to: server)
            let paid1 = try await Self.append("orders-1", "OrderPaid", to: server)
            _ = try await Self.append("ordersarchive-1", "OrderPaid", to: server)
            let port = try Self.port(client)
            // When filtered by category and type, then only the category's payments.
            let byCategory = try await LiveResponse.open(port: port, "/subscribe?from=start&category=orders&type=OrderPaid&limit=2")
            try await byCategory.waitForEnd("two payments of the orders category")
            #expect(byCategory.text == [paid2, paid1].map { EventJSON.line($0) + "\n" }.joined())
            // When filtered by stream, then only that stream's events.
            let byStream = try await LiveResponse.open(port: port, "/subscribe?from=start&stream=orders-1&limit=2")
            try await byStream.waitForEnd("two events of orders-1")
            #expect(byStream.text == [placed, paid1].map { EventJSON.line($0) + "\n" }.joined())
            // When given two types, then events of either.
            let byTypes = try await LiveResponse.open(port: port, "/subscribe?from=start&type=OrderPlaced&type=UserJoined&limit=2")
            try await byTypes.waitForEnd("the placed order and the joined user")
            #expect(byTypes.text.split(separator: "\n").count == 2)
            #expect(byTypes.text.hasPrefix(EventJSON.line(placed) + "\n"))
        }
    }

    @Test("Last-Event-ID resumes right after that position, over from, with no gap and no duplicate")
    func lastEventIDResumes() async throws {
        try await ServerFixture.with(testing: .live) { server, client in
            // Given five events, and a client that read the first two and went away.
            var events: [RecordedEvent] = []
            for n in 1...5 { events.append(try await Self.append("s-\(n % 2)", "E\(n)", to: server)) }
            let port = try Self.port(client)
            let first = try await LiveResponse.open(port: port, "/subscribe?from=start&limit=2", headers: Self.sse)
            try await first.waitForEnd("the first two events")
            #expect(first.text == events[0...1].map(Self.block).joined())
            // When it comes back with Last-Event-ID 2 (and a from that would start elsewhere).
            let second = try await LiveResponse.open(
                port: port, "/subscribe?from=end&limit=4", headers: Self.sse + [("Last-Event-ID", "2")])
            let expected = events[2...4].map(Self.block).joined() + Self.caughtUp(5)
            try await second.waitForText("events 3 to 5 and caughtUp", asLongAs: expected)
            #expect(second.text == expected)
            // Then the live event after them arrives too, and the limit ends the stream.
            let sixth = try await Self.append("s-0", "E6", to: server)
            try await second.waitForEnd("the sixth event and the end")
            #expect(second.text == expected + Self.block(sixth))
            // And together the two streams saw every position once.
            let ids = (first.text + second.text).split(separator: "\n").filter { $0.hasPrefix("id: ") }.map { String($0.dropFirst(4)) }
            #expect(ids == ["1", "2", "3", "4", "5", "6"])
        }
    }

    @Test(
        "bad parameters get a JSON 400 before any streaming",
        arguments: [
            ("/subscribe?from=middle", [(String, String)]()), ("/subscribe?limit=0", []), ("/subscribe?limit=ten", []),
            ("/subscribe?limit=-1", []), ("/subscribe?limit=", []), ("/subscribe?colour=red", []),
            ("/subscribe?from=1&from=2", []), ("/subscribe?category=a-b", []), ("/subscribe?stream=", []),
            ("/subscribe?from=-1", []), ("/subscribe?from=18446744073709551616", []),
            ("/subscribe", [("Last-Event-ID", "seven")]), ("/subscribe", [("Last-Event-ID", "18446744073709551615")]),
        ])
    func badParameters(uri: String, headers: [(String, String)]) async throws {
        try await ServerFixture.with(testing: .live) { server, client in
            let response = try await LiveResponse.open(port: try Self.port(client), uri, headers: Self.sse + headers)
            let end = try await response.waitForEnd("the 400 answer")
            #expect(end.failure == nil)
            #expect(response.status == 400)
            #expect(response.headers["content-type"] == "application/json; charset=utf-8")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(response.text.utf8)) as? [String: Any])
            #expect(object["code"] as? String == "badRequest")
            let message = try #require(object["error"] as? String)
            #expect(message.hasSuffix("."))
            #expect(object.count == 2)
            #expect(server.openStreams.count == 0)
        }
    }

    @Test("a client that disconnects ends its handler, even while its stream is idle")
    func disconnectEndsHandler() async throws {
        try await ServerFixture.with(testing: .live) { server, client in
            let port = try Self.port(client)
            for (path, headers) in [("/subscribe", Self.sse), ("/subscribe", [])] {
                // Given an idle stream (SSE or NDJSON) of a client of its own.
                let own = HTTPClient(eventLoopGroupProvider: .singleton)
                do {
                    let stream = try await LiveResponse.open(port: port, path, headers: headers, client: own)
                    try await withTimeout(.seconds(10), "the stream's handler to start") { await server.openStreams.wait { $0 == 1 } }
                    #expect(server.openStreams.count == 1)
                    _ = stream
                } catch {
                    // A client dropped without shutdown() is a fatal error in its deinit.
                    try? await own.shutdown()
                    throw error
                }
                // When the client goes away, then the handler ends without any event or heartbeat.
                try await own.shutdown()
                try await withTimeout(.seconds(10), "the handler of \(path) to end after the client left") {
                    await server.openStreams.wait { $0 == 0 }
                }
                #expect(server.openStreams.count == 0)
            }
        }
    }

    @Test("a graceful stop ends open streams cleanly")
    func gracefulStop() async throws {
        // Given a live server with an SSE and an NDJSON stream open (and idle).
        let (streams, openStreams) = try await withTimeout(.seconds(60), "the server to stop with streams open") {
            try await ServerFixture.with(testing: .live) { server, client -> ([LiveResponse], OpenStreams) in
                let port = try Self.port(client)
                let sse = try await LiveResponse.open(port: port, "/subscribe", headers: Self.sse)
                try await sse.waitForText("caughtUp") { $0 == Self.caughtUp(0) }
                let ndjson = try await LiveResponse.open(port: port, "/subscribe")
                try await withTimeout(.seconds(10), "both handlers to start") { await server.openStreams.wait { $0 == 2 } }
                // When the test body returns, the fixture triggers the service group's graceful shutdown.
                return ([sse, ndjson], server.openStreams)
            }
        }
        // Then the server stopped, each stream ended cleanly (by the graceful path: the test
        // framework's service group stops the application with no grace to cut streams after,
        // so a broken path shows as a stop that never ends, which the timeouts bound), and no
        // handler is left.
        for stream in streams {
            let end = try await stream.waitForEnd("the stream to end on the graceful stop", timeout: .seconds(30))
            #expect(end.failure == nil)
        }
        // (A heartbeat may come first when the stop is slow: it is a comment, not an event.)
        #expect(streams[0].text.replacingOccurrences(of: ": heartbeat\n\n", with: "") == Self.caughtUp(0))
        #expect(streams[1].text == "")
        #expect(openStreams.count == 0)
    }
}
