import EventStore
import Foundation
import HTTPServer
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import WireFormat

@Suite("The log over HTTP: appends, stream pages, the global log, stats")
struct LogRouteTests {
    static let idA = "00000000-0000-0000-0000-0000000000a1"
    static let idB = "00000000-0000-0000-0000-0000000000b2"
    static let twoEvents = #"[{"type":"Placed","data":{"n":1},"id":"\#(idA)"},{"type":"Paid","data":{"n":2},"id":"\#(idB)","metadata":{"by":"x"}}]"#

    @Test("POST /streams/{stream} appends 201; the same ids again answer 200 with the original positions")
    func appendAndRetry() async throws {
        try await ServerFixture.with { server, client in
            // Given an empty store, when two events are posted to a stream, then 201 and the result.
            try await client.execute(uri: "/streams/order-1", method: .post, body: ByteBuffer(string: Self.twoEvents)) { response in
                #expect(response.status == .created)
                #expect(response.headers[.contentType] == "application/json; charset=utf-8")
                #expect(response.text == #"{"stream":"order-1","version":2,"positions":[1,2],"alreadyRecorded":false}"# + "\n")
            }
            // When the same request is sent again, then 200, the original positions, nothing written.
            try await client.execute(uri: "/streams/order-1", method: .post, body: ByteBuffer(string: Self.twoEvents)) { response in
                #expect(response.status == .ok)
                #expect(response.text == #"{"stream":"order-1","version":2,"positions":[1,2],"alreadyRecorded":true}"# + "\n")
            }
            let events = try await server.store.readStream("order-1", from: nil, direction: .forward, limit: 10)
            #expect(events.map(\.type) == ["Placed", "Paid"])
            #expect(events.map { String(decoding: $0.data, as: UTF8.self) } == [#"{"n":1}"#, #"{"n":2}"#])
            #expect(events.map { String(decoding: $0.metadata, as: UTF8.self) } == ["", #"{"by":"x"}"#])
            #expect(events.map { $0.id.uuidString.lowercased() } == [Self.idA, Self.idB])
            #expect(try await server.store.headPosition() == 2)
        }
    }

    @Test("GET /events examines a bounded number of positions and says where to go on with Next-From")
    func eventsPageIsBounded() async throws {
        try await ServerFixture.with { server, client in
            // Given 12,000 events of one type, then one of a rare type
            for _ in 0..<3 {
                _ = try await server.store.append(to: "filler-1", events: (0..<4000).map { _ in NewEvent(type: "Filler", data: Data("{}".utf8)) })
            }
            _ = try await server.store.append(to: "rare-1", events: [NewEvent(type: "Rare", data: Data("{}".utf8))])
            // When the rare type is asked for, then the first page stops after 10,000 positions,
            // empty, and says where to go on
            try await client.execute(uri: "/events?type=Rare", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.text == "")
                #expect(response.headers[HTTPField.Name("Next-From")!] == "10001")
            }
            // And the next page finds the event and ends the range (no Next-From)
            try await client.execute(uri: "/events?type=Rare&from=10001", method: .get) { response in
                #expect(response.text.contains(#""position":12001"#))
                #expect(response.headers[HTTPField.Name("Next-From")!] == nil)
            }
            // A page that reaches its limit says where the next one starts; one within `to` says nothing
            try await client.execute(uri: "/events?limit=2", method: .get) { response in
                #expect(response.text.split(separator: "\n").count == 2)
                #expect(response.headers[HTTPField.Name("Next-From")!] == "3")
            }
            try await client.execute(uri: "/events?limit=2&to=2", method: .get) { response in
                #expect(response.headers[HTTPField.Name("Next-From")!] == nil)
            }
        }
    }

    @Test("An event's schemaVersion is recorded from the body and shown in reads when it is not 1")
    func schemaVersion() async throws {
        try await ServerFixture.with { server, client in
            // Given an event of schema version 4 and one without a version, posted to a stream
            let body = #"[{"type":"Placed","data":{},"schemaVersion":4},{"type":"Placed","data":{}}]"#
            try await client.execute(uri: "/streams/order-1", method: .post, body: ByteBuffer(string: body)) { response in
                #expect(response.status == .created)
            }
            // Then the store holds versions 4 and 1, and the stream's page shows only the first's
            let events = try await server.store.readStream("order-1", from: nil, direction: .forward, limit: 10)
            #expect(events.map(\.schemaVersion) == [4, 1])
            try await client.execute(uri: "/streams/order-1", method: .get) { response in
                let lines = response.text.split(separator: "\n")
                #expect(lines.count == 2)
                #expect(lines.first?.contains(#""schemaVersion":4"#) == true, "\(response.text)")
                #expect(lines.last?.contains("schemaVersion") == false, "\(response.text)")
            }
            // And a version of 0 is a 400 that writes nothing
            let zero = #"[{"type":"Placed","data":{},"schemaVersion":0}]"#
            try await client.execute(uri: "/streams/order-1", method: .post, body: ByteBuffer(string: zero)) { response in
                #expect(response.status == .badRequest)
            }
            #expect(try await server.store.headPosition() == 2)
        }
    }

    @Test("Expected-Version: a conflict is 409 with expected, actual and Current-Version; a right one appends; a malformed one is 400")
    func expectedVersion() async throws {
        try await ServerFixture.with { server, client in
            // Given a stream at version 2.
            _ = try await server.store.append(
                to: "order-1", events: [NewEvent(type: "Placed", data: Data("{}".utf8)), NewEvent(type: "Paid", data: Data("{}".utf8))])
            let one = ByteBuffer(string: #"[{"type":"Shipped"}]"#)
            // When no-stream is expected, then 409 with the conflict, and nothing is written.
            try await client.execute(uri: "/streams/order-1", method: .post, headers: [.expectedVersionName: "no-stream"], body: one) { response in
                #expect(response.status == .conflict)
                #expect(response.headers[.currentVersionName] == "2")
                let object = response.object
                #expect(object["code"] as? String == "versionConflict")
                #expect(object["stream"] as? String == "order-1")
                #expect(object["expected"] as? String == "no-stream")
                #expect(object["actual"] as? Int == 2)
                #expect((object["error"] as? String)?.isEmpty == false)
            }
            try await client.execute(uri: "/streams/order-1", method: .post, headers: [.expectedVersionName: "5"], body: one) { response in
                #expect(response.status == .conflict)
                #expect(response.headers[.currentVersionName] == "2")
                #expect(response.object["expected"] as? String == "5")
            }
            #expect(try await server.store.headPosition() == 2)
            // When the header is malformed, then 400 naming it, and nothing is written.
            for bad in ["+5", "-1", "two", "1.0", "Any"] {
                try await client.execute(uri: "/streams/order-1", method: .post, headers: [.expectedVersionName: bad], body: one) { response in
                    #expect(response.status == .badRequest, "Expected-Version '\(bad)'")
                    #expect(response.object["code"] as? String == "badRequest")
                    #expect(
                        response.object["error"] as? String
                            == "The Expected-Version header takes any, no-stream, exists or a version number of 0 or more; '\(bad)' is not one.")
                }
            }
            #expect(try await server.store.headPosition() == 2)
            // When the right version is expected, then 201.
            try await client.execute(uri: "/streams/order-1", method: .post, headers: [.expectedVersionName: "2"], body: one) { response in
                #expect(response.status == .created)
                #expect(response.text == #"{"stream":"order-1","version":3,"positions":[3],"alreadyRecorded":false}"# + "\n")
            }
            try await client.execute(uri: "/streams/order-2", method: .post, headers: [.expectedVersionName: "no-stream"], body: one) { response in
                #expect(response.status == .created)
                #expect(response.text == #"{"stream":"order-2","version":1,"positions":[4],"alreadyRecorded":false}"# + "\n")
            }
            try await client.execute(uri: "/streams/order-3", method: .post, headers: [.expectedVersionName: "exists"], body: one) { response in
                #expect(response.status == .conflict)
                #expect(response.headers[.currentVersionName] == "0")
            }
            #expect(try await server.store.headPosition() == 4)
        }
    }

    @Test("POST /streams/{stream} refuses bad bodies and parameters with 400 and writes nothing")
    func badAppends() async throws {
        try await ServerFixture.with { server, client in
            let cases: [(body: String, code: String, mentions: String)] = [
                ("not json", "invalidBatch", "not a JSON array"),
                (#"{"type":"A"}"#, "invalidBatch", "not a JSON array"),
                ("[]", "invalidBatch", "no events"),
                (#"[{"data":{}}]"#, "invalidEvent", "Event 1"),
                (#"[{"type":"A"},{"type":"B","data":{"x":}}]"#, "invalidBatch", "not a JSON array"),
                (#"[{"type":"A"},{"type":7}]"#, "invalidEvent", "Event 2"),
                (#"[{"type":"A","stream":"other"}]"#, "invalidEvent", "'other'"),
                (#"[{"type":"A","expectedVersion":"any"}]"#, "invalidEvent", "Expected-Version header"),
                (#"[{"type":"A","id":"nope"}]"#, "invalidEvent", "UUID"),
                (#"[{"type":"A","id":"\#(Self.idA)"},{"type":"B","id":"\#(Self.idA)"}]"#, "invalidBatch", "Event 2 repeats the id"),
                (#"[{"type":"A","data":"@@","dataEncoding":"base64"}]"#, "invalidEvent", "base64"),
            ]
            for (body, code, mentions) in cases {
                try await client.execute(uri: "/streams/order-1", method: .post, body: ByteBuffer(string: body)) { response in
                    #expect(response.status == .badRequest, "\(body)")
                    #expect(response.object["code"] as? String == code, "\(body)")
                    #expect((response.object["error"] as? String)?.contains(mentions) == true, "\(body): \(response.text)")
                }
            }
            try await client.execute(uri: "/streams/order-1?x=1", method: .post, body: ByteBuffer(string: #"[{"type":"A"}]"#)) { response in
                #expect(response.status == .badRequest)
                #expect((response.object["error"] as? String)?.contains("'x'") == true)
            }
            #expect(try await server.store.headPosition() == 0)
            // An event may repeat the stream its path names.
            try await client.execute(uri: "/streams/order-1", method: .post, body: ByteBuffer(string: #"[{"type":"A","stream":"order-1"}]"#)) { response in
                #expect(response.status == .created)
            }
            #expect(try await server.store.headPosition() == 1)
        }
    }

    @Test("A body over the limit is 413 and nothing is written")
    func bodyLimit() async throws {
        try await ServerFixture.with(options: ServerOptions(port: 0, maxBodyBytes: 64)) { server, client in
            // Given a 64-byte limit, when 200 bytes are posted to either appending route, then 413.
            let big = "[" + Array(repeating: #"{"type":"A"}"#, count: 16).joined(separator: ",") + "]"
            #expect(big.utf8.count > 64)
            try await client.execute(uri: "/streams/order-1", method: .post, body: ByteBuffer(string: big)) { response in
                #expect(response.status == .contentTooLarge)
                #expect(response.object["code"] as? String == "payloadTooLarge")
            }
            let lines = Array(repeating: #"{"stream":"a","type":"A"}"#, count: 8).joined(separator: "\n")
            try await client.execute(uri: "/append", method: .post, body: ByteBuffer(string: lines)) { response in
                #expect(response.status == .contentTooLarge)
                #expect(response.object["code"] as? String == "payloadTooLarge")
            }
            // A body under the limit goes through.
            try await client.execute(uri: "/streams/order-1", method: .post, body: ByteBuffer(string: #"[{"type":"A"}]"#)) { response in
                #expect(response.status == .created)
            }
            #expect(try await server.store.headPosition() == 1)
        }
    }

    @Test("POST /append: NDJSON lines in one atomic append, one result per stream part in input order")
    func batchAppend() async throws {
        try await ServerFixture.with { server, client in
            let lines = """
                {"stream":"a","type":"One","id":"\(Self.idA)"}
                {"stream":"a","type":"Two","data":{"k":2}}

                {"stream":"b","type":"Three","expectedVersion":"no-stream","id":"\(Self.idB)"}\r
                """
            // Given an empty store, when three events for two streams are posted, then 201 and one
            // result per run of lines of one stream.
            try await client.execute(uri: "/append", method: .post, body: ByteBuffer(string: lines)) { response in
                #expect(response.status == .created)
                #expect(response.headers[.contentType] == "application/json; charset=utf-8")
                #expect(
                    response.text
                        == #"[{"stream":"a","version":2,"positions":[1,2],"alreadyRecorded":false},{"stream":"b","version":1,"positions":[3],"alreadyRecorded":false}]"#
                        + "\n")
            }
            let events = try await server.store.read(from: 1, through: .max, limit: 10, filter: .all)
            #expect(events.map(\.type) == ["One", "Two", "Three"])
            #expect(events.map(\.stream) == ["a", "a", "b"])
            // When the first and last lines alone are sent again (their ids are recorded), then 200.
            let retry = """
                {"stream":"a","type":"One","id":"\(Self.idA)"}
                {"stream":"b","type":"Three","id":"\(Self.idB)"}
                """
            try await client.execute(uri: "/append", method: .post, body: ByteBuffer(string: retry)) { response in
                #expect(response.status == .ok)
                #expect(
                    response.text
                        == #"[{"stream":"a","version":1,"positions":[1],"alreadyRecorded":true},{"stream":"b","version":1,"positions":[3],"alreadyRecorded":true}]"#
                        + "\n")
            }
            // When a stream's expectation fails, then 409 and nothing of the batch is written.
            let conflicting = """
                {"stream":"c","type":"New"}
                {"stream":"b","type":"More","expectedVersion":5}
                """
            try await client.execute(uri: "/append", method: .post, body: ByteBuffer(string: conflicting)) { response in
                #expect(response.status == .conflict)
                #expect(response.headers[.currentVersionName] == "1")
                #expect(response.object["stream"] as? String == "b")
                #expect(response.object["expected"] as? String == "5")
                #expect(response.object["actual"] as? Int == 1)
            }
            #expect(try await server.store.headPosition() == 3)
        }
    }

    @Test("POST /append refuses bad lines, empty batches and unknown parameters with 400, naming what is wrong")
    func badBatches() async throws {
        try await ServerFixture.with { server, client in
            let cases: [(body: String, code: String, mentions: String)] = [
                ("", "invalidBatch", "no events"),
                ("\n  \n", "invalidBatch", "no events"),
                ("{\"stream\":\"a\",\"type\":\"A\"}\nnot json", "invalidLine", "Line 2"),
                ("{\"stream\":\"a\"}", "invalidLine", "\"type\" is missing"),
                ("{\"stream\":\"a\",\"type\":\"A\"}\n{\"stream\":\"a\",\"type\":\"B\",\"expectedVersion\":1}", "invalidBatch", "Line 2"),
                ("{\"stream\":\"a\",\"type\":\"A\",\"id\":\"\(Self.idA)\"}\n{\"stream\":\"b\",\"type\":\"A\",\"id\":\"\(Self.idA)\"}", "invalidBatch", "repeats the id"),
            ]
            for (body, code, mentions) in cases {
                try await client.execute(uri: "/append", method: .post, body: ByteBuffer(string: body)) { response in
                    #expect(response.status == .badRequest, "\(body)")
                    #expect(response.object["code"] as? String == code, "\(body)")
                    #expect((response.object["error"] as? String)?.contains(mentions) == true, "\(body): \(response.text)")
                }
            }
            try await client.execute(uri: "/append?dryRun=1", method: .post, body: ByteBuffer(string: #"{"stream":"a","type":"A"}"#)) { response in
                #expect(response.status == .badRequest)
                #expect((response.object["error"] as? String)?.contains("'dryRun'") == true)
            }
            #expect(try await server.store.headPosition() == 0)
        }
    }

    @Test("GET /streams/{stream} answers a bounded NDJSON page, forward or backward; 404 for no stream")
    func readStream() async throws {
        try await ServerFixture.with { server, client in
            // Given a stream of five events and another stream between them.
            for number in 1...5 {
                _ = try await server.store.append(to: "order-1", events: [NewEvent(type: "Step", data: Data("{\"n\":\(number)}".utf8))])
                _ = try await server.store.append(to: "order-2", events: [NewEvent(type: "Other", data: Data("{}".utf8))])
            }
            let all = try await server.store.readStream("order-1", from: nil, direction: .forward, limit: 10)
            #expect(all.count == 5)
            func lines(_ events: [RecordedEvent]) -> String { events.map { EventJSON.line($0) + "\n" }.joined() }
            // When pages are asked for, then each holds exactly those events as `replay --json` lines.
            let pages: [(query: String, versions: [UInt64])] = [
                ("", [1, 2, 3, 4, 5]), ("?from=2&limit=2", [2, 3]), ("?direction=backward&limit=2", [5, 4]),
                ("?direction=backward&from=3", [3, 2, 1]), ("?direction=forward&from=5", [5]), ("?from=6", []), ("?limit=0", []),
            ]
            for (query, versions) in pages {
                try await client.execute(uri: "/streams/order-1" + query, method: .get) { response in
                    #expect(response.status == .ok, "\(query)")
                    #expect(response.headers[.contentType] == "application/x-ndjson")
                    let expected = versions.map { version in all[Int(version) - 1] }
                    #expect(response.text == lines(expected), "\(query)")
                }
            }
            // The line's keys and their order are those of `replay --json`.
            try await client.execute(uri: "/streams/order-1?limit=1", method: .get) { response in
                #expect(response.text.hasPrefix(#"{"position":1,"stream":"order-1","version":1,"id":""#))
                #expect(response.text.contains(#","type":"Step","data":{"n":1},"metadata":null,"recordedAt":""#))
            }
            // A stream with no events is a JSON 404.
            try await client.execute(uri: "/streams/nothing-here", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(response.headers[.contentType] == "application/json; charset=utf-8")
                #expect(response.object["code"] as? String == "notFound")
                #expect((response.object["error"] as? String)?.contains("nothing-here") == true)
            }
            // Malformed or unknown parameters are 400s naming the parameter.
            for (query, name) in [
                ("limit=abc", "'limit'"), ("limit=10001", "'limit'"), ("limit=-1", "'limit'"), ("from=+2", "'from'"), ("direction=sideways", "'direction'"),
                ("to=3", "'to'"), ("from=1&from=2", "'from'"),
            ] {
                try await client.execute(uri: "/streams/order-1?" + query, method: .get) { response in
                    #expect(response.status == .badRequest, "\(query)")
                    #expect(response.object["code"] as? String == "badRequest", "\(query)")
                    #expect((response.object["error"] as? String)?.contains(name) == true, "\(query): \(response.text)")
                }
            }
        }
    }

    @Test("GET /streams/{stream} decodes a percent-encoded stream name")
    func encodedStreamName() async throws {
        try await ServerFixture.with { server, client in
            _ = try await server.store.append(to: "a b/c", events: [NewEvent(type: "A", data: Data("{}".utf8))])
            try await client.execute(uri: "/streams/a%20b%2Fc", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.text.contains(#""stream":"a b/c""#))
            }
        }
    }

    @Test("GET /events answers a filtered, bounded page of the global log as NDJSON")
    func globalLog() async throws {
        try await ServerFixture.with { server, client in
            // Given six events in two categories and two types.
            for number in 1...3 {
                _ = try await server.store.append(to: "order-\(number)", events: [NewEvent(type: "Placed", data: Data("{}".utf8))])
                _ = try await server.store.append(to: "user-\(number)", events: [NewEvent(type: "Joined", data: Data("{}".utf8))])
            }
            let all = try await server.store.read(from: 1, through: .max, limit: 10, filter: .all)
            #expect(all.count == 6)
            let pages: [(query: String, positions: [UInt64])] = [
                ("", [1, 2, 3, 4, 5, 6]), ("?from=2&to=4", [2, 3, 4]), ("?limit=2", [1, 2]), ("?from=0&limit=1", [1]),
                ("?category=order", [1, 3, 5]), ("?category=user-", [2, 4, 6]), ("?type=Joined&from=3", [4, 6]),
                ("?type=Joined&type=Placed&limit=3", [1, 2, 3]), ("?type=None", []), ("?from=7", []), ("?limit=0", []),
            ]
            for (query, positions) in pages {
                try await client.execute(uri: "/events" + query, method: .get) { response in
                    #expect(response.status == .ok, "\(query)")
                    #expect(response.headers[.contentType] == "application/x-ndjson")
                    let expected = positions.map { all[Int($0) - 1] }
                    #expect(response.text == expected.map { EventJSON.line($0) + "\n" }.joined(), "\(query)")
                }
            }
            for (query, name) in [
                ("from=x", "'from'"), ("to=-1", "'to'"), ("from=4&to=2", "'to'"), ("limit=20000", "'limit'"), ("category=a-b", "'category'"),
                ("stream=order-1", "'stream'"), ("limit=1&limit=2", "'limit'"), ("from=%ZZ", "'from'"),
                // Empty filters are refused, as /subscribe refuses them, not read as "every event"
                ("category=", "'category' is empty"), ("type=", "'type' is empty"), ("type=Joined&type=", "'type' is empty"),
            ] {
                try await client.execute(uri: "/events?" + query, method: .get) { response in
                    #expect(response.status == .badRequest, "\(query)")
                    #expect((response.object["error"] as? String)?.contains(name) == true, "\(query): \(response.text)")
                }
            }
        }
    }

    @Test("GET /stats answers the object `esctl stats --json` prints")
    func stats() async throws {
        try await ServerFixture.with { server, client in
            _ = try await server.store.append(to: "order-1", events: [NewEvent(type: "A", data: Data("{}".utf8))])
            let stats = try await server.store.statistics()
            try await client.execute(uri: "/stats", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json; charset=utf-8")
                #expect(response.text == StatisticsJSON.object(stats, location: server.store.location) + "\n")
                let object = response.object
                #expect(Set(object.keys) == ["eventCount", "streamCount", "firstPosition", "headPosition", "fileSize", "mapSize", "pageSize", "path"])
                #expect(object["eventCount"] as? Int == 1)
                #expect(object["headPosition"] as? Int == 1)
                #expect(object["path"] as? String == server.store.location)
            }
            try await client.execute(uri: "/stats?verbose=1", method: .get) { response in
                #expect(response.status == .badRequest)
            }
            try await client.execute(uri: "/stats", method: .post) { response in
                #expect((400..<500).contains(Int(response.status.code)))
            }
        }
    }
}

extension HTTPField.Name {
    static let expectedVersionName = HTTPField.Name("Expected-Version") ?? .contentType
    static let currentVersionName = HTTPField.Name("Current-Version") ?? .contentType
}
