import Apps
import EventStore
import Foundation
import HTTPServer
import Hummingbird
import HummingbirdTesting
import NIOCore
import Projections
import Testing
import WireFormat

@Suite("Projections over HTTP: statuses, queries, rebuilds")
struct ProjectionRouteTests {
    /// Three events of two types, so `count-by-type` has something to count.
    static func seed(_ store: any EventLog) async throws {
        _ = try await store.append(to: "order-1", events: [NewEvent(type: "Placed", data: Data("{}".utf8))])
        _ = try await store.append(to: "order-2", events: [NewEvent(type: "Placed", data: Data("{}".utf8))])
        _ = try await store.append(to: "order-1", events: [NewEvent(type: "Paid", data: Data("{}".utf8))])
    }

    @Test("GET /projections answers `esctl projections --json`'s objects as one array")
    func list() async throws {
        try await ServerFixture.with { server, client in
            try await Self.seed(server.store)
            _ = try await server.runner.catchUp(["count-by-type"])
            let statuses = try await server.runner.statuses()
            try await client.execute(uri: "/projections", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json; charset=utf-8")
                #expect(response.text == "[" + statuses.map(ProjectionJSON.status).joined(separator: ",") + "]\n")
                let array = try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [[String: Any]])
                #expect(array.map { $0["name"] as? String } == AppCatalog.all.map(\.name))
                for object in array {
                    #expect(
                        Set(object.keys)
                            == ["name", "version", "checkpoint", "lag", "building", "hash", "eventsSkipped", "skippedPositions", "rebuild"])
                }
                let counts = try #require(array.first { $0["name"] as? String == "count-by-type" })
                #expect(counts["checkpoint"] as? Int == 3)
                #expect(counts["lag"] as? Int == 0)
            }
            try await client.execute(uri: "/projections?all=1", method: .get) { response in
                #expect(response.status == .badRequest)
                #expect((response.object["error"] as? String)?.contains("'all'") == true)
            }
        }
    }

    @Test("GET /projections/{name} answers the body of `esctl query NAME --json`, caught up")
    func query() async throws {
        try await ServerFixture.with { server, client in
            // Given three events, when count-by-type is queried, then it has counted all three.
            try await Self.seed(server.store)
            try await client.execute(uri: "/projections/count-by-type", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json; charset=utf-8")
                #expect(response.text == #"{"types":{"Paid":1,"Placed":2},"total":3}"# + "\n")
            }
            let now = try await server.runner.query("count-by-type")
            try await client.execute(uri: "/projections/count-by-type", method: .get) { response in
                #expect(response.text == now.serialized + "\n")
            }
            // asOf: the state as of a position of the past.
            try await client.execute(uri: "/projections/count-by-type?asOf=2", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.text == #"{"types":{"Placed":2},"total":2}"# + "\n")
            }
            // minPosition: waits until applied (here at once: the position is committed).
            try await client.execute(uri: "/projections/count-by-type?minPosition=3&timeout=2", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.text == #"{"types":{"Paid":1,"Placed":2},"total":3}"# + "\n")
            }
            // A projection's own parameters pass through.
            let summary = try await server.runner.query("stream-summary", parameters: ["category": "order"])
            try await client.execute(uri: "/projections/stream-summary?category=order", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.text == summary.serialized + "\n")
            }
        }
    }

    @Test("GET /projections/{name}: 404 for an unknown one, 400 for bad parameters, 412 when minPosition is not reached in time")
    func queryRefusals() async throws {
        try await ServerFixture.with { server, client in
            try await Self.seed(server.store)
            try await client.execute(uri: "/projections/no-such?asOf=1", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(response.object["code"] as? String == "unknownProjection")
            }
            let refusals: [(query: String, code: String, mentions: String)] = [
                ("color=red", "invalidQuery", "'color'"),
                ("asOf=x", "badRequest", "'asOf'"),
                ("minPosition=-1", "badRequest", "'minPosition'"),
                ("asOf=1&minPosition=1", "badRequest", "'asOf'"),
                ("timeout=1", "badRequest", "'timeout'"),
                ("minPosition=1&timeout=0", "badRequest", "'timeout'"),
                ("minPosition=1&timeout=301", "badRequest", "'timeout'"),
                ("minPosition=1&timeout=1e2", "badRequest", "'timeout'"),
                ("asOf=1&asOf=2", "badRequest", "'asOf'"),
                ("asOf=9", "invalidQuery", "beyond the head"),
            ]
            for (query, code, mentions) in refusals {
                try await client.execute(uri: "/projections/count-by-type?" + query, method: .get) { response in
                    #expect(response.status == .badRequest, "\(query)")
                    #expect(response.object["code"] as? String == code, "\(query)")
                    #expect((response.object["error"] as? String)?.contains(mentions) == true, "\(query): \(response.text)")
                }
            }
            // A position past the head is never applied: the wait ends at its timeout with 412.
            try await client.execute(uri: "/projections/count-by-type?minPosition=10&timeout=0.05", method: .get) { response in
                #expect(response.status == .preconditionFailed)
                #expect(response.object["code"] as? String == "timedOut")
                #expect((response.object["error"] as? String)?.contains("did not reach position 10") == true)
            }
        }
    }

    @Test("POST /projections/{name}/rebuild answers `esctl rebuild NAME --json`'s report")
    func rebuild() async throws {
        try await ServerFixture.with { server, client in
            try await Self.seed(server.store)
            try await client.execute(uri: "/projections/count-by-type/rebuild", method: .post) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json; charset=utf-8")
                let object = response.object
                #expect(Set(object.keys) == ["name", "eventsApplied", "eventsSkipped", "checkpoint", "seconds", "hash"])
                #expect(object["name"] as? String == "count-by-type")
                #expect(object["eventsApplied"] as? Int == 3)
                #expect(object["eventsSkipped"] as? Int == 0)
                #expect(object["checkpoint"] as? Int == 3)
                #expect(object["seconds"] is NSNumber)
                let hash = try await server.runner.storedHash(of: "count-by-type")
                #expect(object["hash"] as? String == hash)
                #expect(response.text.hasPrefix(#"{"name":"count-by-type","eventsApplied":3,"eventsSkipped":0,"checkpoint":3,"seconds":"#))
            }
            try await client.execute(uri: "/projections/no-such/rebuild", method: .post) { response in
                #expect(response.status == .notFound)
                #expect(response.object["code"] as? String == "unknownProjection")
            }
            try await client.execute(uri: "/projections/count-by-type/rebuild", method: .get) { response in
                #expect((400..<500).contains(Int(response.status.code)))
            }
        }
    }
}
