import EventStore
import Foundation
import HTTPServer
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@Suite("Deletion and retention over HTTP: DELETE /streams/{stream}, its info, its retention, POST /purge")
struct StreamMaintenanceRouteTests {
    static let placed = #"[{"type":"Placed","id":"00000000-0000-0000-0000-0000000000a1"},{"type":"Paid"}]"#

    @Test("DELETE removes a stream (410 for a tombstone after hard=true); info and the same id again say what is left")
    func deleteAndInfo() async throws {
        try await ServerFixture.with { server, client in
            // Given a stream of two events
            try await client.execute(uri: "/streams/order-1", method: .post, body: ByteBuffer(string: Self.placed)) { #expect($0.status == .created) }
            // When it is deleted with a wrong expected version, then 409
            try await client.execute(uri: "/streams/order-1", method: .delete, headers: [.expectedVersionName: "1"]) { #expect($0.status == .conflict) }
            // When it is deleted, then 200 and the deletion
            try await client.execute(uri: "/streams/order-1", method: .delete, headers: [.expectedVersionName: "2"]) { response in
                #expect(response.status == .ok)
                #expect(
                    response.text
                        == #"{"stream":"order-1","fromVersion":1,"toVersion":2,"count":2,"hard":false,"reason":"delete","types":["Paid","Placed"],"position":3}"#
                        + "\n")
            }
            try await client.execute(uri: "/streams/order-1/info", method: .get) { response in
                #expect(response.text == #"{"stream":"order-1","version":2,"firstVersion":3,"eventCount":0,"tombstoned":false,"retention":null}"# + "\n")
            }
            // And the same id again writes nothing, and says deleted
            try await client.execute(uri: "/streams/order-1", method: .post, body: ByteBuffer(string: #"[{"type":"Placed","id":"00000000-0000-0000-0000-0000000000a1"}]"#)) {
                response in
                #expect(response.status == .ok)
                #expect(response.text == #"{"stream":"order-1","version":2,"positions":[1],"alreadyRecorded":true,"deleted":true}"# + "\n")
            }
            // When it is recreated and deleted hard, then appends answer 410
            try await client.execute(uri: "/streams/order-1", method: .post, body: ByteBuffer(string: #"[{"type":"Placed"}]"#)) { #expect($0.status == .created) }
            try await client.execute(uri: "/streams/order-1?hard=true", method: .delete) { #expect($0.status == .ok) }
            try await client.execute(uri: "/streams/order-1", method: .post, body: ByteBuffer(string: #"[{"type":"Placed"}]"#)) { response in
                #expect(response.status == .gone)
                #expect(response.text.contains(#""code":"streamTombstoned""#))
            }
            // And unknown streams, bad flags and the store's own streams are refused
            try await client.execute(uri: "/streams/never-1", method: .delete) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/streams/never-1/info", method: .get) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/streams/order-1?hard=yes", method: .delete) { #expect($0.status == .badRequest) }
            try await client.execute(uri: "/streams/%24deletions", method: .delete) { #expect($0.status == .badRequest) }
            for stream in ["%24projections", "%24tracking", "%24keys", "%24deletions"] {
                try await client.execute(uri: "/streams/\(stream)", method: .post, body: ByteBuffer(string: #"[{"type":"EventPassedOver"}]"#)) { response in
                    #expect(response.status == .badRequest && response.text.contains("belongs to the store"), "\(stream): \(response.text)")
                }
            }
            try await client.execute(uri: "/append", method: .post, body: ByteBuffer(string: #"{"stream":"$projections","type":"EventPassedOver"}"# + "\n")) { response in
                #expect(response.status == .badRequest && response.text.contains("belongs to the store"), "\(response.text)")
            }
            #expect(try await server.store.verify().isClean)
        }
    }

    @Test("PUT retention sets a policy the next append applies; POST /purge applies every one and says what it removed")
    func retentionAndPurge() async throws {
        try await ServerFixture.with { server, client in
            // Given two streams of three events
            for stream in ["a-1", "b-1"] {
                _ = try await server.store.append(to: stream, events: (1...3).map { _ in NewEvent(type: "Noted", data: Data("{}".utf8)) })
            }
            // When a-1 keeps 1 and b-1 drops versions before 3
            try await client.execute(uri: "/streams/a-1/retention", method: .put, body: ByteBuffer(string: #"{"maxCount":1}"#)) { response in
                #expect(response.status == .ok)
                #expect(response.text == #"{"stream":"a-1","retention":{"maxCount":1}}"# + "\n")
            }
            try await client.execute(uri: "/streams/b-1/retention", method: .put, body: ByteBuffer(string: #"{"truncateBefore":3,"maxAgeSeconds":86400}"#)) {
                #expect($0.status == .ok)
            }
            try await client.execute(uri: "/streams/b-1/retention", method: .put, body: ByteBuffer(string: #"{"maxCount":0}"#)) { #expect($0.status == .badRequest) }
            try await client.execute(uri: "/streams/b-1/retention", method: .put, body: ByteBuffer(string: #"{"keep":1}"#)) { #expect($0.status == .badRequest) }
            // Then a purge removes what both no longer keep
            try await client.execute(uri: "/purge", method: .post) { response in
                #expect(response.status == .ok)
                #expect(response.text.hasPrefix(#"{"removed":4,"deletions":[{"stream":"a-1","fromVersion":1,"toVersion":2,"#), "\(response.text)")
            }
            try await client.execute(uri: "/streams/b-1/info", method: .get) { response in
                #expect(response.text == #"{"stream":"b-1","version":3,"firstVersion":3,"eventCount":1,"tombstoned":false,"retention":{"maxAgeSeconds":86400,"truncateBefore":3}}"# + "\n")
            }
        }
    }

    @Test("POST /subjects/{subject}/forget forgets what an append marked personal; again, it answers alreadyForgotten")
    func forgetOverHTTP() async throws {
        try await ServerFixture.with { server, client in
            // Given a camper appended over HTTP with a personal contact
            let body = #"[{"type":"CamperAdded","data":{"camperId":"C1","contact":{"fullName":"Ann Smith"}},"personal":[{"subject":"camper:C1","fields":["contact"]}]}]"#
            try await client.execute(uri: "/streams/camp-1", method: .post, body: ByteBuffer(string: body)) { #expect($0.status == .created) }
            try await client.execute(uri: "/streams/camp-1", method: .get) { response in
                #expect(response.text.contains(#""contact":{"fullName":"Ann Smith"}"#) && response.text.contains(#""personal":[{"subject":"camper:C1","fields":["contact"]}]"#), "\(response.text)")
            }
            // When the camper is forgotten
            try await client.execute(uri: "/subjects/camper:C1/forget", method: .post) { response in
                #expect(response.status == .ok)
                #expect(response.text.contains(#""requestPosition":2,"forgottenPosition":3,"alreadyForgotten":false,"known":true}"#), "\(response.text)")
            }
            // Then the stream shows the marker, and a second forget writes nothing
            try await client.execute(uri: "/streams/camp-1", method: .get) { response in
                #expect(response.text.contains(#""contact":{"$forgotten":"camper:C1"}"#) && !response.text.contains("Ann Smith"), "\(response.text)")
            }
            try await client.execute(uri: "/subjects/camper:C1/forget", method: .post) { response in
                #expect(response.text == #"{"subject":"camper:C1","key":null,"requestPosition":null,"forgottenPosition":null,"alreadyForgotten":true,"known":true}"# + "\n")
            }
            let head = try await server.store.headPosition()
            #expect(head == 3)
        }
    }
}
