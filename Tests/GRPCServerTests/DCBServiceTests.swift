import EventStore
import EventStoreTesting
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import Synchronization
import TestSupport
import Testing
import WireFormat

@testable import GRPCServer

/// The DCB service over loopback, with the generated client: UmaDB's semantics on the store.
@Suite(.temporaryStore) struct DCBServiceTests {
    @Test func appendsReadsWithHeadsAndRefusesAFailedCondition() async throws {
        try await withFace { dcb, _ in
            // Given an empty store: head absent, and a read gives one message without a head.
            #expect(try await dcb.head(Umadb_V1_HeadRequest()).hasPosition == false)
            #expect(try await read(dcb, Umadb_V1_ReadRequest()).map(\.hasHead) == [false])

            // When three events are appended in two calls.
            #expect(try await dcb.append(appendRequest([event("type1", tags: ["tagX"]), event("type2", tags: ["tagA"])])).position == 2)
            #expect(try await dcb.append(appendRequest([event("type3", tags: ["tagA", "tagB"])])).position == 3)

            // Then a whole read sends them with the head 3; a limited one the last position of its
            // batches; a backward one from the top; a query by tag only its events.
            let whole = try await read(dcb, Umadb_V1_ReadRequest())
            #expect(whole.flatMap { $0.events.map(\.position) } == [1, 2, 3])
            #expect(whole.map(\.head) == [3])
            var limited = Umadb_V1_ReadRequest()
            limited.limit = 3
            limited.batchSize = 2
            #expect(try await read(dcb, limited).map(\.head) == [2, 3])
            var backwards = Umadb_V1_ReadRequest()
            backwards.backwards = true
            backwards.limit = 2
            #expect(try await read(dcb, backwards).flatMap { $0.events.map(\.position) } == [3, 2])
            var byTag = Umadb_V1_ReadRequest()
            byTag.query = query(tags: ["tagA"])
            #expect(try await read(dcb, byTag).flatMap { $0.events.map(\.position) } == [2, 3])
            var none = Umadb_V1_ReadRequest()
            none.limit = 0
            #expect(try await read(dcb, none).isEmpty)

            // And a condition that matches fails with FAILED_PRECONDITION and UmaDB's
            // ErrorResponse (INTEGRITY), writing nothing.
            var conditional = appendRequest([event("type4")])
            conditional.condition.failIfEventsMatch = query(tags: ["tagB"])
            conditional.condition.after = 2
            let error = await #expect(throws: RPCError.self) { try await dcb.append(conditional) }
            #expect(error?.code == .failedPrecondition)
            let details = error.flatMap { $0.metadata[binaryValues: "grpc-status-details-bin"].first(where: { _ in true }) }
            let decoded = try details.map { try Umadb_V1_ErrorResponse(serializedBytes: $0) }
            #expect(decoded?.errorType == .integrity)
            #expect(decoded?.message.hasPrefix("integrity error: condition failed:") == true)
            #expect(try await dcb.head(Umadb_V1_HeadRequest()).position == 3)
        }
    }

    @Test func aRetriedConditionalAppendIsAnsweredAsRecorded() async throws {
        try await withFace { dcb, _ in
            // Given a conditional append of an event with a uuid that committed.
            var request = appendRequest([event("Registered", tags: ["student-1"], uuid: "6f9619ff-8b86-d011-b42d-00c04fc964ff")])
            request.condition.failIfEventsMatch = query(tags: ["student-1"])
            #expect(try await dcb.append(request).position == 1)

            // When it is sent again (its answer was lost), and then with another uuid.
            let retried = try await dcb.append(request)
            request.events[0].uuid = "7f9619ff-8b86-d011-b42d-00c04fc964ff"
            let other = request

            // Then the retry is answered with the position recorded, and the other refused.
            #expect(retried.position == 1)
            await #expect(throws: RPCError.self) { try await dcb.append(other) }
            #expect(try await dcb.head(Umadb_V1_HeadRequest()).position == 1)
        }
    }

    @Test func aSubscriptionCatchesUpThenFollowsWithoutGapOrDuplicate() async throws {
        try await withFace { dcb, _ in
            // Given two events.
            _ = try await dcb.append(appendRequest([event("a"), event("b")]))
            var subscription = Umadb_V1_SubscribeRequest()
            subscription.after = 0
            subscription.batchSize = 1
            let request = subscription
            let positions = try await withTimeout(.seconds(20), "the four positions of the subscription") {
                try await dcb.subscribe(request) { response in
                    var seen: [UInt64] = []
                    for try await message in response.messages {
                        seen += message.events.map(\.position)
                        // When the catch-up is done, two more are appended.
                        if seen.count == 2 { _ = try await dcb.append(appendRequest([event("c"), event("d")])) }
                        if seen.count >= 4 { break }
                    }
                    return seen
                }
            }
            // Then it sees each once, in order.
            #expect(positions == [1, 2, 3, 4])
        }
    }

    @Test func callsWithoutTheAPIKeyAreRefusedAndHealthNeedsNone() async throws {
        try await withFace(apiKey: "0123456789abcdef") { dcb, health in
            // Given a server with an API key, when a call comes without it or with another.
            let missing = await #expect(throws: RPCError.self) { try await dcb.head(Umadb_V1_HeadRequest()) }
            let wrong = await #expect(throws: RPCError.self) {
                try await dcb.head(Umadb_V1_HeadRequest(), metadata: ["authorization": "Bearer 0123456789abcdeX"])
            }
            // Then both are UNAUTHENTICATED; with it the call is served; health needs none.
            #expect(missing?.code == .unauthenticated)
            #expect(wrong?.code == .unauthenticated)
            let served = try await dcb.head(Umadb_V1_HeadRequest(), metadata: ["authorization": "Bearer 0123456789abcdef"])
            #expect(!served.hasPosition)
            var check = Grpc_Health_V1_HealthCheckRequest()
            let server = try await health.check(check)
            #expect(server.status == .serving)
            check.service = "umadb.v1.DCB"
            let service = try await health.check(check)
            #expect(service.status == .serving)
            check.service = "nope"
            let unknown = await #expect(throws: RPCError.self) { try await health.check(check) }
            #expect(unknown?.code == .notFound)
        }
    }

    @Test func oneStoreEveryFace() async throws {
        let store = try #require(TemporaryStore.current)
        try await withFace { dcb, _ in
            // Given an event appended over gRPC, and one appended through the store with tags.
            _ = try await dcb.append(appendRequest([event("Joined", tags: ["room:1"], uuid: "6f9619ff-8b86-d011-b42d-00c04fc964ff")]))
            _ = try await store.append(
                to: "rooms-1", events: [NewEvent(type: "Said", data: Data(#"{"text":"hi"}"#.utf8), tags: ["room:1"])])

            // When the store reads the first as any face does, and gRPC queries the tag.
            let recorded = try #require(try store.event(at: 1))
            let line = EventJSON.line(recorded)
            var byTag = Umadb_V1_ReadRequest()
            byTag.query = query(tags: ["room:1"])
            let found = try await read(dcb, byTag).flatMap(\.events)

            // Then the gRPC event sits in the stream dcb with binary data (base64 in JSON), its
            // uuid in its metadata; and gRPC finds both events, the other with its JSON bytes.
            #expect(recorded.stream == "dcb" && recorded.dataFormat == .binary)
            #expect(line.contains(#""stream":"dcb""#) && line.contains(#""dataEncoding":"base64""#))
            #expect(line.contains(#""metadata":{"$uuid":"6f9619ff-8b86-d011-b42d-00c04fc964ff"}"#))
            #expect(found.map(\.position) == [1, 2])
            #expect(found.last?.event.data == Data(#"{"text":"hi"}"#.utf8))
            #expect(found.last?.event.eventType == "Said")
        }
    }

    @Test func aConnectionPastTheCapIsClosedAndTheOthersAreServed() async throws {
        try await withFace(maxConnections: 1) { dcb, _, port in
            // Given a face that holds one connection, held by this test's client.
            #expect(try await dcb.head(Umadb_V1_HeadRequest()).hasPosition == false)

            // When another connection comes.
            let closed = try await withTimeout(.seconds(40), "the server to close the connection past its cap") {
                try Self.connectionIsClosed(port: port)
            }

            // Then the server closes it at once, and serves the first one still.
            #expect(closed)
            #expect(try await dcb.append(appendRequest([event("Still")])).position == 1)
        }
    }

    /// Connects to `port` and waits (up to 20 s: a loaded machine may keep the server's event
    /// loop from a core for seconds; under the face's 30 s silence limit, which would close the
    /// connection too) for the server to close the connection unread.
    private static func connectionIsClosed(port: Int) throws -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SocketFailure(errno: errno) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else { return true }
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var byte: UInt8 = 0
        // 0: the server closed it; -1 with ECONNRESET: it reset it; a timeout: still open.
        let got = recv(fd, &byte, 1, 0)
        return got == 0 || (got < 0 && errno == ECONNRESET)
    }

    // MARK: Support

    /// Serves the store of the test on a free loopback port and runs `body` with clients of it.
    private func withFace(
        apiKey: String? = nil,
        _ body: @escaping @Sendable (Umadb_V1_DCB.Client<HTTP2ClientTransport.Posix>, Grpc_Health_V1_Health.Client<HTTP2ClientTransport.Posix>) async throws -> Void
    ) async throws {
        try await withFace(apiKey: apiKey) { dcb, health, _ in try await body(dcb, health) }
    }

    /// ``withFace(apiKey:_:)`` with the face's connection cap, and its port given to `body`.
    private func withFace(
        apiKey: String? = nil, maxConnections: Int = 1024,
        _ body: @escaping @Sendable (Umadb_V1_DCB.Client<HTTP2ClientTransport.Posix>, Grpc_Health_V1_Health.Client<HTTP2ClientTransport.Posix>, Int) async throws -> Void
    ) async throws {
        let store = try #require(TemporaryStore.current)
        let port = Mutex<Int?>(nil)
        var options = GRPCOptions(port: 0, apiKey: apiKey)
        options.maxConnections = maxConnections
        let face = GRPCFace(store: store, options: options, logger: .init(label: "test")) { _, bound in
            port.withLock { $0 = bound }
        }
        let serving = Task { try await face.run() }
        defer { serving.cancel() }
        try await waitUntil("the gRPC face to listen") { port.withLock { $0 != nil } }
        let transport = try HTTP2ClientTransport.Posix(
            target: .ipv4(address: "127.0.0.1", port: port.withLock { $0 } ?? 0), transportSecurity: .plaintext)
        let bound = port.withLock { $0 } ?? 0
        try await withGRPCClient(transport: transport) { client in
            try await withTimeout(.seconds(60), "the test's calls to finish") {
                try await body(Umadb_V1_DCB.Client(wrapping: client), Grpc_Health_V1_Health.Client(wrapping: client), bound)
            }
        }
    }

    private func read(_ dcb: Umadb_V1_DCB.Client<HTTP2ClientTransport.Posix>, _ request: Umadb_V1_ReadRequest) async throws
        -> [Umadb_V1_ReadResponse]
    {
        try await dcb.read(request) { response in
            var messages: [Umadb_V1_ReadResponse] = []
            for try await message in response.messages { messages.append(message) }
            return messages
        }
    }

    private func event(_ type: String, tags: [String] = [], uuid: String = "") -> Umadb_V1_Event {
        var event = Umadb_V1_Event()
        event.eventType = type
        event.tags = tags
        event.data = Data(type.utf8)
        event.uuid = uuid
        return event
    }

    private func appendRequest(_ events: [Umadb_V1_Event]) -> Umadb_V1_AppendRequest {
        var request = Umadb_V1_AppendRequest()
        request.events = events
        return request
    }

    private func query(types: [String] = [], tags: [String]) -> Umadb_V1_Query {
        var item = Umadb_V1_QueryItem()
        item.types = types
        item.tags = tags
        var query = Umadb_V1_Query()
        query.items = [item]
        return query
    }
}

/// A socket the test could not make.
private struct SocketFailure: Error {
    let errno: Int32
}
