import EventStore
import EventStoreTesting
import Foundation
import HTTPServer
import HummingbirdTesting
import Testing
import TestSupport

/// What a client can make the server hold: live streams and waits are capped, a client that
/// stops reading is cut, and answers hold pages bounded in bytes. Each test failed before.
@Suite("the server's memory, bounded by bytes and caps")
struct MemoryBoundTests {
    /// `count` events of `bytes` bytes of JSON data each, in stream `stream`.
    static func append(_ count: Int, of bytes: Int, to stream: String, in store: any EventLog) async throws {
        let event = NewEvent(type: "Big", data: Data(("\"" + String(repeating: "x", count: max(bytes - 2, 0)) + "\"").utf8))
        _ = try await store.append(to: stream, events: Array(repeating: event, count: count))
    }

    /// The number under `key` of each NDJSON line of `text`.
    static func numbers(_ key: String, in text: String) -> [UInt64] {
        text.split(separator: "\n").compactMap { line in
            ((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any])?[key] as? NSNumber
        }.map(\.uint64Value)
    }

    @Test("past --max-subscribers, a new live stream gets 503 with Retry-After and writes nothing; once one ends, a new one is served")
    func subscriberCap() async throws {
        var options = ServerOptions(port: 0)
        options.maxSubscribers = 2
        try await ServerFixture.with(options: options, testing: .live) { server, client in
            let port = try UnderAttackTests.port(client)
            // Given two open live streams: the cap
            let held = [try await RawConnection.open(port: port), try await RawConnection.open(port: port)]
            for connection in held {
                try await connection.send(RawConnection.request("GET", "/subscribe?from=start"))
                try await connection.waitForText("HTTP/1.1 200")
            }
            try await waitUntil("the server to count both streams (\(server.openStreams.count) open)") { server.openStreams.count == 2 }
            // When a third stream and a chat connection are asked for
            let refused = try await RawConnection.exchange(port: port, RawConnection.request("GET", "/subscribe?from=start"))
            let chat = try await RawConnection.exchange(port: port, RawConnection.request("GET", "/chat/room?ann"))
            // Then both get 503 with Retry-After and the JSON error, and the chat records no connection
            for answer in [refused, chat] {
                #expect(RawConnection.status(answer) == 503, "\(answer)")
                #expect(answer.lowercased().contains("retry-after: 1"), "\(answer)")
                #expect(answer.contains(#""code":"unavailable""#), "\(answer)")
            }
            #expect(try await server.store.headPosition() == 0)
            // And once one stream ends, a new one is served
            await held[0].close()
            try await waitUntil("the server to end the closed stream (\(server.openStreams.count) open)") { server.openStreams.count == 1 }
            let served = try await RawConnection.open(port: port)
            try await served.send(RawConnection.request("GET", "/subscribe?from=start"))
            try await served.waitForText("HTTP/1.1 200")
            await served.close()
            await held[1].close()
        }
    }

    @Test("a burst of live streams asked for at once stays within --max-subscribers: the place is taken before the stream starts")
    func subscriberCapUnderBurst() async throws {
        var options = ServerOptions(port: 0)
        options.maxSubscribers = 2
        try await ServerFixture.with(options: options, testing: .live) { server, client in
            let port = try UnderAttackTests.port(client)
            // Given ten connections, each with a stream request written at once
            var connections: [RawConnection] = []
            for _ in 0..<10 { connections.append(try await RawConnection.open(port: port)) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for connection in connections {
                    group.addTask { try await connection.send(RawConnection.request("GET", "/subscribe?from=start")) }
                }
                try await group.waitForAll()
            }
            // When every one has its answer's status line
            var statuses: [Int] = []
            for connection in connections {
                statuses.append(RawConnection.status(try await connection.waitForText("HTTP/1.1 ")))
            }
            // Then exactly two streams are served and eight refused
            #expect(statuses.sorted() == [200, 200] + Array(repeating: 503, count: 8), "\(statuses)")
            #expect(server.openStreams.count <= 2)
            for connection in connections { await connection.close() }
        }
    }

    @Test("past --max-waits, a new minPosition wait gets 503 with Retry-After; a query without a wait is still answered")
    func waitCap() async throws {
        var options = ServerOptions(port: 0)
        options.maxWaits = 1
        try await ServerFixture.with(options: options, testing: .live) { server, client in
            let port = try UnderAttackTests.port(client)
            // Given one query waiting for a position far ahead: the cap
            let waiting = try await RawConnection.open(port: port)
            try await waiting.send(RawConnection.request("GET", "/projections/count-by-type?minPosition=1000&timeout=300"))
            // (/metrics says when it holds its place: a second request sent before would wait itself)
            var metrics = ""
            for _ in 0..<300 {
                metrics = try await RawConnection.exchange(port: port, RawConnection.request("GET", "/metrics"))
                if metrics.contains("\nhttp_waiting_queries 1") { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            try #require(metrics.contains("\nhttp_waiting_queries 1"), "the first wait never held its place: \(metrics.suffix(400))")
            // When a second wait is asked for
            let answer = try await RawConnection.exchange(
                port: port, RawConnection.request("GET", "/projections/count-by-type?minPosition=1000&timeout=300"))
            // Then it gets 503 with Retry-After, and a query that does not wait is answered
            #expect(RawConnection.status(answer) == 503, "\(answer)")
            #expect(answer.lowercased().contains("retry-after: 1"), "\(answer)")
            #expect(answer.contains("--max-waits"), "\(answer)")
            let plain = try await RawConnection.exchange(port: port, RawConnection.request("GET", "/projections/count-by-type"))
            #expect(RawConnection.status(plain) == 200, "\(plain)")
            await waiting.close()
        }
    }

    /// Sends `requests` at once on a connection that never reads, to a server with a stall
    /// timeout of 3 s over a log of 200 events of 64 kB (12.8 MB, more than every socket buffer
    /// between), and waits until the stream it opened has ended.
    static func expectStalledClientCut(sending requests: String) async throws {
        var options = ServerOptions(port: 0)
        options.stallTimeout = .seconds(3)
        try await ServerFixture.with(options: options, testing: .live) { server, client in
            let port = try UnderAttackTests.port(client)
            for batch in 0..<10 { try await Self.append(20, of: 64_000, to: "big-\(batch)", in: server.store) }
            let stalled = try await RawConnection.open(port: port, reading: false)
            // The stream is open only from its start to the cut (the stall timeout after the
            // buffers fill): a waiter, told of every change once it waits, sees it however late it
            // starts within those 3 s, where a poll could miss it on a machine that starved the
            // polling task for the whole window.
            let streams = server.openStreams
            let opened = Task { await streams.wait { $0 == 1 } }
            defer { opened.cancel() }
            try await stalled.send(requests)
            try await withTimeout(.seconds(10), "the stalled client's stream to open") { await opened.value }
            // However long the log, the server closes the connection and the stream ends
            try await waitUntil("the server to cut the stalled stream (\(server.openStreams.count) open)", timeout: .seconds(60)) {
                server.openStreams.count == 0
            }
            await stalled.close()
        }
    }

    @Test("a client that stops reading a live stream of large events is cut after the stall timeout, and the stream's handler ends")
    func stalledClientCut() async throws {
        // Given a client that asks for all of a large log and never reads, then it is cut
        try await Self.expectStalledClientCut(sending: RawConnection.request("GET", "/subscribe?from=start"))
    }

    @Test("a stalled client that pipelined a second request behind its stream is cut all the same, with nothing written into the stream")
    func stalledPipelinedClientCut() async throws {
        // Given a client that pipelines another request behind its stream and never reads, then it is cut
        try await Self.expectStalledClientCut(
            sending: RawConnection.request("GET", "/subscribe?from=start", headers: ["Connection: keep-alive"]) + RawConnection.request("GET", "/health"))
    }

    @Test("GET /events holds a page bounded in bytes: large events end it early with Next-From, and the next page goes on")
    func eventsPageBoundedInBytes() async throws {
        try await ServerFixture.with { server, client in
            // Given six events of 1.5 MB
            try await Self.append(6, of: 1_500_000, to: "big-1", in: server.store)
            // When the log is read with the default limit
            var positions: [[UInt64]] = []
            var from = "1"
            while positions.count < 10 {
                var next: String?
                try await client.execute(uri: "/events?from=\(from)", method: .get) { response in
                    #expect(response.status == .ok)
                    positions.append(Self.numbers("position", in: response.text))
                    next = response.headers[.init("Next-From")!]
                }
                guard let next else { break }
                from = next
            }
            // Then each page holds the events that fit in 4 MiB (two), with Next-From after them
            #expect(positions == [[1, 2], [3, 4], [5, 6]])
        }
    }

    @Test("GET /streams/{stream} answers pages larger than its chunks whole and in order, forward and backward")
    func streamPagesStreamedInChunks() async throws {
        try await ServerFixture.with { server, client in
            // Given a stream of 600 small events and one of 40 events of 100 kB
            for _ in 0..<6 { _ = try await server.store.append(to: "s-1", events: Array(repeating: NewEvent(type: "T", data: Data("{}".utf8)), count: 100)) }
            try await Self.append(40, of: 100_000, to: "big-1", in: server.store)
            func versions(_ uri: String) async throws -> [UInt64] {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == .ok, "\(uri)")
                    return Self.numbers("version", in: response.text)
                }
            }
            // When pages are read that span several chunks, then they hold exactly what was asked
            #expect(try await versions("/streams/s-1?limit=550") == Array(1...550))
            #expect(try await versions("/streams/s-1?from=20&limit=1000") == Array(20...600))
            #expect(try await versions("/streams/s-1?direction=backward&limit=550") == Array((51...600).reversed()))
            #expect(try await versions("/streams/s-1?direction=backward&from=300&limit=1000") == Array((1...300).reversed()))
            #expect(try await versions("/streams/big-1?limit=35") == Array(1...35))
            #expect(try await versions("/streams/big-1?direction=backward") == Array((1...40).reversed()))
        }
    }
}
