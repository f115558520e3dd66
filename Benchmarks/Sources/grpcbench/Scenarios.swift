import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import GRPCServer

typealias DCB = Umadb_V1_DCB.Client<HTTP2ClientTransport.Posix>

/// S15's scenarios, run against one server through the same client code: appends of one event
/// from 1, 64 and 256 concurrent clients, appends of 1,000 events, conditional appends that
/// pass, then (on a log of a million events) an unthrottled read of all of it, a read by tag,
/// and a subscription's catch-up from the start.
struct Scenarios {
    static let names = [
        "append 1 event, 1 client", "append 1 event, 64 clients", "append 1 event, 256 clients", "append 1,000 events",
        "conditional appends that pass, 64 clients", "read 1M events", "read by tag (1% of 1M)", "subscription catch-up of 1M",
    ]
    /// The connections the clients share (as many processes of clients would open).
    static let connections = 8

    let url: Int
    let scale: Double
    /// Runs only the scenarios whose names contain it (nil: all).
    let only: String?

    init(url port: Int, scale: Double, only: String? = nil) {
        self.url = port
        self.scale = scale
        self.only = only
    }

    private func wanted(_ name: String) -> Bool { only.map { name.contains($0) } ?? true }

    private func count(_ base: Int) -> Int { max(1, Int(Double(base) * scale)) }

    /// Runs every scenario and returns events per second by name; `report` hears each figure.
    func run(report: @Sendable (String, Double) -> Void) async throws -> [String: Double] {
        var figures: [String: Double] = [:]
        func note(_ name: String, _ value: Double) {
            figures[name] = value
            report(name, value)
        }
        let transports = try (0..<Self.connections).map { _ in
            try HTTP2ClientTransport.Posix(target: .ipv4(address: "127.0.0.1", port: url), transportSecurity: .plaintext)
        }
        let clients = transports.map { GRPCClient(transport: $0) }
        try await withThrowingDiscardingTaskGroup { group in
            for client in clients { group.addTask { try await client.runConnections() } }
            defer { for client in clients { client.beginGracefulShutdown() } }
            let dcbs = clients.map { DCB(wrapping: $0) }

            for (name, writers, each) in [
                (Self.names[0], 1, count(300)), (Self.names[1], 64, count(40)), (Self.names[2], 256, count(15)),
            ] where wanted(name) {
                note(name, try await appends(dcbs, writers: writers, each: each, events: 1))
            }
            if wanted(Self.names[3]) { note(Self.names[3], try await appends(dcbs, writers: 1, each: count(40), events: 1_000)) }
            if wanted(Self.names[4]) { note(Self.names[4], try await conditionalAppends(dcbs, writers: 64, each: count(20))) }
            guard Self.names[5...].contains(where: wanted) else { return }

            // A log of a million events (1% of them tagged tag-7), for the reads.
            let total = count(1_000_000)
            let have = try await head(dcbs[0])
            if have < total { _ = try await appends(dcbs, writers: 8, each: (total - have) / 8_000 + 1, events: 1_000) }
            let last = try await head(dcbs[0])
            if wanted(Self.names[5]) { note(Self.names[5], try await read(dcbs[0], query: nil, expected: last)) }
            var tagged = Umadb_V1_QueryItem()
            tagged.tags = ["tag-7"]
            var query = Umadb_V1_Query()
            query.items = [tagged]
            if wanted(Self.names[6]) { note(Self.names[6], try await read(dcbs[0], query: query, expected: nil)) }
            if wanted(Self.names[7]) { note(Self.names[7], try await catchUp(dcbs[0], through: last)) }
        }
        return figures
    }

    /// Events a second of `writers` concurrent clients, each making `each` appends of `events`
    /// events.
    private func appends(_ dcbs: [DCB], writers: Int, each: Int, events: Int) async throws -> Double {
        let start = ContinuousClock.now
        try await withThrowingDiscardingTaskGroup { group in
            for writer in 0..<writers {
                let dcb = dcbs[writer % dcbs.count]
                group.addTask {
                    for round in 0..<each {
                        var request = Umadb_V1_AppendRequest()
                        request.events = (0..<events).map { Self.event(index: writer &* 1_000_003 &+ round &* 1_009 &+ $0) }
                        _ = try await dcb.append(request)
                    }
                }
            }
        }
        return Double(writers * each * events) / seconds(since: start)
    }

    /// Events a second of conditional appends that pass: each client guards its own tag after
    /// the position of its own last append.
    private func conditionalAppends(_ dcbs: [DCB], writers: Int, each: Int) async throws -> Double {
        let start = ContinuousClock.now
        let prefix = UUID().uuidString.prefix(8)
        try await withThrowingDiscardingTaskGroup { group in
            for writer in 0..<writers {
                let dcb = dcbs[writer % dcbs.count]
                group.addTask {
                    var after: UInt64 = try await dcb.head(Umadb_V1_HeadRequest()).position
                    let tag = "client-\(prefix)-\(writer)"
                    for round in 0..<each {
                        var request = Umadb_V1_AppendRequest()
                        var event = Self.event(index: round)
                        event.tags = [tag]
                        request.events = [event]
                        var item = Umadb_V1_QueryItem()
                        item.tags = [tag]
                        request.condition.failIfEventsMatch.items = [item]
                        request.condition.after = after
                        after = try await dcb.append(request).position
                    }
                }
            }
        }
        return Double(writers * each) / seconds(since: start)
    }

    /// Events a second of one read of everything `query` matches (each batch the server's default size).
    private func read(_ dcb: DCB, query: Umadb_V1_Query?, expected: Int?) async throws -> Double {
        var request = Umadb_V1_ReadRequest()
        if let query { request.query = query }
        let start = ContinuousClock.now
        let received = try await dcb.read(request) { response in
            var count = 0
            for try await message in response.messages { count += message.events.count }
            return count
        }
        if let expected, received != expected { throw BenchError("read \(received) events of \(expected)") }
        return Double(received) / seconds(since: start)
    }

    /// Events a second of a subscription from the start until it has delivered `through`.
    private func catchUp(_ dcb: DCB, through last: Int) async throws -> Double {
        var request = Umadb_V1_SubscribeRequest()
        request.after = 0
        let start = ContinuousClock.now
        let received = try await dcb.subscribe(request) { response in
            var count = 0
            for try await message in response.messages {
                count += message.events.count
                if let position = message.events.last?.position, position >= UInt64(last) { break }
            }
            return count
        }
        return Double(received) / seconds(since: start)
    }

    private func head(_ dcb: DCB) async throws -> Int {
        Int(try await dcb.head(Umadb_V1_HeadRequest()).position)
    }

    /// A benchmark event: 64 bytes of data, one tag of a hundred (tag-7 on 1% of them).
    static func event(index: Int) -> Umadb_V1_Event {
        var event = Umadb_V1_Event()
        event.eventType = "BenchEvent"
        event.tags = ["tag-\(abs(index) % 100)"]
        event.data = Data(repeating: UInt8(truncatingIfNeeded: index), count: 64)
        return event
    }

    private func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return max(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18, 1e-9)
    }
}
