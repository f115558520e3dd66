import Apps
import Commands
import Projections
@testable import EventStoreCore
@testable import EventStoreLMDB
import EventStoreTesting
import Foundation
import Testing
import TestSupport

@Suite("Forgetting a person: personal data sealed per subject, forgotten when its key goes, on every backend")
struct ForgettingConformanceTests {
    static let ann = #"{"site":15,"contact":{"name":"Ann Smith","phone":"555-0101"}}"#
    static let annRead = #"{"site":15,"contact":{"name":"Ann Smith","phone":"555-0101"}}"#
    static let annForgotten = #"{"site":15,"contact":{"$forgotten":"camper:C1"}}"#

    func camper(_ json: String = ann, id: UUID? = nil) -> NewEvent {
        NewEvent(id: id, type: "CamperAdded", data: Data(json.utf8), personal: [PersonalData(subject: "camper:C1", fields: ["contact"])])
    }

    func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

    /// The data of every event of `stream` through every read path, keyed by path.
    func everyPath(_ f: LogFixture, _ stream: String) async throws -> [String: [String]] {
        var paths: [String: [String]] = [:]
        paths["read"] = try await f.log.read(from: 1, through: .max, limit: 100, filter: EventFilter(stream: stream)).map { text($0.data) }
        paths["stream"] = try await f.log.readStream(stream, from: nil, direction: .forward, limit: 100).map { text($0.data) }
        var paged: [String] = []
        for try await event in f.log.events(from: 1, through: .max, filter: EventFilter(stream: stream), pageSize: 1) { paged.append(text(event.data)) }
        paths["pages"] = paged
        let first = try #require(try await f.log.readStream(stream, from: nil, direction: .forward, limit: 1).first)
        paths["at"] = [text(try #require(try await f.log.event(at: first.position)).data)]
        paths["by id"] = [text(try #require(try await f.log.event(withID: first.id)).data)]
        paths["query"] = try await f.log.read(.all, after: 0, limit: 100).events.filter { $0.stream == stream }.map { text($0.data) }
        var inPlace: [String] = []
        _ = try await f.log.forEachEvent(matching: .all, after: 0, limit: 100) { if $0.stream == stream { inPlace.append(text(Data($0.data))) } }
        paths["query in place"] = inPlace
        paths["tables"] = try await f.log.readTables { txn in
            var seen: [String] = []
            try await txn.forEachEvent(inStream: stream) { seen.append(text($0.data)) }
            return seen
        }
        return paths
    }

    @Test("personal fields read back on every path, are stored sealed, and a retry seals to the same bytes", arguments: Backend.allCases)
    func sealedAndRead(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a camper whose contact is personal
            let id = UUID()
            let first = try await f.log.append(to: "camp-1", events: [camper(id: id)])
            // When it is read through every path
            let paths = try await everyPath(f, "camp-1")
            // Then every path gives the data as appended
            for (path, data) in paths { #expect(data == [Self.annRead], "path \(path)") }
            // And an exact retry is answered as recorded (the seal is deterministic)
            let retry = try await f.log.append(to: "camp-1", events: [camper(id: id)])
            #expect(retry.alreadyRecorded && retry.positions == first.positions)
            // And the stored bytes hold no plaintext
            let stored = try await f.log.readTables { txn in try await txn.get(SubjectKeys.table, [UInt8(ascii: "s")] + Array("camper:C1".utf8)) }
            #expect(stored?.count == 48, "the subject has one key")
        }
    }

    @Test("forget shows the subject's fields as forgotten on every path, keeps other subjects, and is idempotent", arguments: Backend.allCases)
    func forgetEveryPath(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given one event with two subjects' fields and one whole payload of a third
            _ = try await f.log.append(to: "camp-1", events: [camper()])
            let pair = NewEvent(
                type: "Shared", data: Data(#"{"a":"alpha","b":"beta","c":3}"#.utf8),
                personal: [PersonalData(subject: "s1", fields: ["a"]), PersonalData(subject: "s2", fields: ["b"])])
            _ = try await f.log.append(to: "pair-1", events: [pair])
            _ = try await f.log.append(
                to: "whole-1", events: [NewEvent(type: "Note", data: Data(#"{"text":"hi"}"#.utf8), personal: [PersonalData(subject: "camper:C1")])])
            // When camper:C1 and s1 are forgotten
            let forgetting = try await f.log.forget("camper:C1")
            let again = try await f.log.forget("camper:C1")
            _ = try await f.log.forget("s1")
            // Then the forget wrote a request and a forgotten event, the second nothing
            #expect(forgetting.keyID != nil && forgetting.requestPosition != nil && forgetting.forgottenPosition != nil)
            #expect(again.wasAlreadyForgotten && again.requestPosition == nil)
            let system = try await f.log.readStream("$forgotten", from: nil, direction: .forward, limit: 10).map(\.type)
            #expect(system == ["$ForgetRequested", "$SubjectForgotten", "$ForgetRequested", "$SubjectForgotten"])
            // And every path shows the forgotten marker, never an error
            for (path, data) in try await everyPath(f, "camp-1") { #expect(data == [Self.annForgotten], "path \(path)") }
            for (path, data) in try await everyPath(f, "whole-1") { #expect(data == [#"{"$forgotten":"camper:C1"}"#], "path \(path)") }
            // And the other subject of the shared event is still readable
            for (path, data) in try await everyPath(f, "pair-1") {
                #expect(data == [#"{"a":{"$forgotten":"s1"},"b":"beta","c":3}"#], "path \(path)")
            }
            // And a later event of the subject gets a new key and reads back
            _ = try await f.log.append(to: "camp-2", events: [camper()])
            #expect(try await f.log.readStream("camp-2", from: nil, direction: .forward, limit: 1).map { text($0.data) } == [Self.annRead])
            #expect(try await everyPath(f, "camp-1")["read"] == [Self.annForgotten])
            // And all of it holds across a reopen
            try await f.reopen()
            for (path, data) in try await everyPath(f, "camp-1") { #expect(data == [Self.annForgotten], "path \(path) after reopen") }
        }
    }

    @Test("a retry of an event recorded before its subject was forgotten is answered as recorded; other content still conflicts", arguments: Backend.allCases)
    func retryAfterForget(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a camper appended with an id, then forgotten, then given a new key by another event
            let id = UUID()
            let first = try await f.log.append(to: "camp-1", events: [camper(id: id)])
            _ = try await f.log.forget("camper:C1")
            _ = try await f.log.append(to: "camp-2", events: [camper()])
            // When the first append is retried, then it is answered as recorded, nothing written
            let head = try await f.log.headPosition()
            let retry = try await f.log.append(to: "camp-1", events: [camper(id: id)])
            #expect(retry.alreadyRecorded && retry.positions == first.positions)
            #expect(try await f.log.headPosition() == head)
            // And a retry whose other data differs is still a conflict
            let changed = #"{"site":16,"contact":{"name":"Ann Smith","phone":"555-0101"}}"#
            let error = await #expect(throws: EventStoreError.self) { try await f.log.append(to: "camp-1", events: [camper(changed, id: id)]) }
            #expect(error?.code == .idempotencyConflict)
            // And the recorded event still reads as forgotten
            #expect(try await everyPath(f, "camp-1")["read"] == [Self.annForgotten])
        }
    }

    @Test("a crash after any step of a forget ends forgotten on the next open", arguments: Backend.allCases)
    func crashBetweenSteps(_ backend: Backend) async throws {
        for step in 1...2 {
            try await withLog(backend) { f in
                // Given a camper, and a forget that stopped after step `step`
                _ = try await f.log.append(to: "camp-1", events: [camper()])
                let key = try #require(try await f.log.readTables { try await SubjectKeys.key(of: "camper:C1", in: $0) })
                _ = try await SystemWrites.$isActive.withValue(true) {
                    try await f.log.append(
                        to: "$forgotten", events: [Forgetting.event(Forgetting.requestType, subject: "camper:C1", keyID: key.idText)],
                        expectedVersion: .noStream)
                }
                if step == 2 {
                    try await f.log.openTables([SubjectKeys.table, "$snapshots"])
                    var pending = Forgetting.Pending()
                    pending.destroy = [("camper:C1", key.idText)]
                    try await f.log.writeTables { [pending] txn in try await Forgetting.destroyKeys(pending, in: txn) }
                }
                // When the store opens again
                try await f.reopen()
                // Then the subject is forgotten and the forgotten event is recorded once
                #expect(try await everyPath(f, "camp-1")["read"] == [Self.annForgotten], "after step \(step)")
                let system = try await f.log.readStream("$forgotten", from: nil, direction: .forward, limit: 10).map(\.type)
                #expect(system == ["$ForgetRequested", "$SubjectForgotten"], "after step \(step)")
                // And forgetting again writes nothing
                #expect(try await f.log.forget("camper:C1").wasAlreadyForgotten)
            }
        }
    }

    @Test("forgets of several subjects at once all finish, and the next open has nothing left to do", arguments: Backend.allCases)
    func concurrentForgets(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given eight subjects with personal data
            let subjects = (1...8).map { "p-\($0)" }
            for subject in subjects {
                _ = try await f.log.append(
                    to: "doc-\(subject)", events: [NewEvent(type: "Doc", data: Data(#"{"x":"secret"}"#.utf8), personal: [PersonalData(subject: subject)])])
            }
            // When all are forgotten at once
            let log = f.log
            let results = try await withThrowingTaskGroup(of: SubjectForgetting.self) { group in
                for subject in subjects { group.addTask { try await log.forget(subject) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            // Then each forget destroyed its key, and each request has its forgotten event
            #expect(results.allSatisfy { !$0.wasAlreadyForgotten } && results.count == 8)
            let system = try await f.log.readStream("$forgotten", from: nil, direction: .forward, limit: 100)
            #expect(system.filter { $0.type == "$ForgetRequested" }.count == 8)
            #expect(Set(system.filter { $0.type == "$SubjectForgotten" }.map { String(decoding: $0.data, as: UTF8.self) }).count == 8)
            for subject in subjects {
                #expect(try await everyPath(f, "doc-\(subject)")["read"] == [#"{"$forgotten":"\#(subject)"}"#])
            }
            // And reopening finds nothing pending
            let head = try await f.log.headPosition()
            try await f.reopen()
            #expect(try await f.log.headPosition() == head)
        }
    }

    @Test("a key table restored from before a forget is forgotten again on open", arguments: Backend.allCases)
    func restoredKeyTable(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a forgotten camper
            _ = try await f.log.append(to: "camp-1", events: [camper()])
            let key = try #require(try await f.log.readTables { try await SubjectKeys.key(of: "camper:C1", in: $0) })
            _ = try await f.log.forget("camper:C1")
            // When the key table comes back as it was before the forget
            try await f.log.writeTables { txn in
                try await txn.put(SubjectKeys.table, [UInt8(ascii: "s")] + Array("camper:C1".utf8), key.id + key.material)
                try await SubjectKeys.setCheckedVersion(0, in: txn)
            }
            #expect(try await everyPath(f, "camp-1")["read"] == [Self.annRead], "the restored key reads")
            try await f.reopen()
            // Then the open destroys it again
            #expect(try await everyPath(f, "camp-1")["read"] == [Self.annForgotten])
        }
    }

    @Test("bad marks and data that looks sealed are refused, and nothing is written", arguments: Backend.allCases)
    func refusals(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let cases: [NewEvent] = [
                NewEvent(type: "T", data: Data(#"{"a":1}"#.utf8), personal: [PersonalData(subject: "s", fields: ["b"])]),
                NewEvent(type: "T", data: Data("[1]".utf8), personal: [PersonalData(subject: "s", fields: ["a"])]),
                NewEvent(type: "T", data: Data(#"{"a":1}"#.utf8), personal: [PersonalData(subject: "", fields: ["a"])]),
                NewEvent(type: "T", data: Data(#"{"a":1}"#.utf8), personal: [PersonalData(subject: "s", fields: [])]),
                NewEvent(
                    type: "T", data: Data(#"{"a":1}"#.utf8),
                    personal: [PersonalData(subject: "s", fields: ["a"]), PersonalData(subject: "t", fields: ["a"])]),
                NewEvent(type: "T", data: Data(#"{"a":1}"#.utf8), personal: [PersonalData(subject: "s"), PersonalData(subject: "t", fields: ["a"])]),
                NewEvent(type: "T", data: Data(#"{"$personal":[],"data":{}}"#.utf8)),
                NewEvent(type: "T", data: Data(#"{ "$personal" :[{"subject":"s","fields":null,"forgotten":true}]}"#.utf8)),
            ]
            for (index, bad) in cases.enumerated() {
                let error = await #expect(throws: EventStoreError.self, "case \(index)") { try await f.log.append(to: "s-1", events: [bad]) }
                #expect(error?.code == .invalidInput, "case \(index)")
            }
            let refused = await #expect(throws: EventStoreError.self) {
                try await f.log.append(to: "$forgotten", events: [event("X")])
            }
            #expect(refused?.code == .invalidInput)
            let head = try await f.log.headPosition()
            #expect(head == 0)
        }
    }
}

@Suite("Forgetting in the apps: campers' contacts and chat users' messages")
struct ForgettingAppsTests {
    @Test("forgetting a camper and a chat user: the projections drop what they held, rebuild == live, snapshots go", arguments: Backend.allCases)
    func appsForget(_ backend: Backend) async throws {
        try await withDomain(backend, snapshotInterval: 1) { f in
            // Given two campers, a chat between two users, and the projections caught up
            let ann = try #require(try await f.backend.campground(.addCamper(fullName: "Ann Smith", phoneNumber: "555-0101")).camper)
            let bob = try #require(try await f.backend.campground(.addCamper(fullName: "Bob Jones", phoneNumber: "555-0202")).camper)
            _ = try await f.backend.chat(.say("my secret plan"), user: "ann")
            _ = try await f.backend.chat(.say("hello"), user: "bob")
            let runner = try await ProjectionRunner(store: f.store, projections: AppCatalog.apps)
            try await runner.catchUp()
            let campersBefore = try await runner.query("campers", parameters: [:]).description
            #expect(campersBefore.contains("Ann Smith") && campersBefore.contains("555-0101"))
            #expect(try await !Snapshots.list(in: f.store).isEmpty, "the campground's commands wrote snapshots")
            // When ann the camper and ann the chat user are forgotten, and the projections catch up
            _ = try await f.store.forget(CamperAdded.subject(ann.id))
            _ = try await f.store.forget(MessagePosted.subject("ann"))
            try await runner.catchUp()
            // Then the campers projection dropped ann's contact and kept bob's
            let campers = try await runner.query("campers", parameters: [:]).description
            #expect(!campers.contains("Ann Smith") && !campers.contains("555-0101"), "\(campers)")
            #expect(campers.contains("Bob Jones") && campers.contains(ann.id), "\(campers)")
            // And the chat timeline dropped ann's text and kept bob's
            let messages = try await runner.query("messages", parameters: [:]).description
            #expect(!messages.contains("my secret plan") && messages.contains("hello"), "\(messages)")
            // And the campground's state reads ann's contact as forgotten, bob's as it was
            let campground = try await f.backend.campground(named: AppStreams.defaultKey)
            #expect(campground.campers[ann.id]?.fullName == "" && campground.campers[bob.id]?.fullName == "Bob Jones")
            // And no snapshot from before the forget is left
            #expect(try await Snapshots.list(in: f.store).isEmpty)
            // And rebuild == live
            let live = try await AppCatalog.apps.asyncMap { try await runner.storedHash(of: $0.name) }
            #expect(try await runner.rebuild().map(\.hash) == live)
        }
    }

    @Test("after a forget, a compact backup's data file holds neither the forgotten plaintext nor its key (LMDB)")
    func noPlaintextInTheFile() async throws {
        try await withDomain(.lmdb, snapshotInterval: 1) { f in
            // Given a camper and a chat user whose data the projections and snapshots hold
            let ann = try #require(try await f.backend.campground(.addCamper(fullName: "Ann Smith", phoneNumber: "555-0101")).camper)
            _ = try await f.backend.chat(.say("my secret plan"), user: "ann")
            let runner = try await ProjectionRunner(store: f.store, projections: AppCatalog.apps)
            try await runner.catchUp()
            let store = try #require(f.store as? EventStore)
            let keys = try await store.readTables { txn in
                [try await SubjectKeys.key(of: CamperAdded.subject(ann.id), in: txn), try await SubjectKeys.key(of: MessagePosted.subject("ann"), in: txn)]
            }.compactMap { $0?.material }
            #expect(keys.count == 2)
            let secrets = ["Ann Smith", "555-0101", "my secret plan"].map { Array($0.utf8) } + keys
            let directory = try TemporaryDirectory()
            try await store.backup(to: directory.appending("before"), compact: true)
            let before = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory.appending("before/data.mdb"))))
            #expect(secrets.allSatisfy { before.contains(subsequence: $0) }, "the read models and the key table hold them before")
            // When both are forgotten, the projections catch up, and a compact backup is taken
            _ = try await f.store.forget(CamperAdded.subject(ann.id))
            _ = try await f.store.forget(MessagePosted.subject("ann"))
            try await runner.catchUp()
            try await store.backup(to: directory.appending("after"), compact: true)
            // Then its data file holds none of them
            let after = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory.appending("after/data.mdb"))))
            for (index, secret) in secrets.enumerated() { #expect(!after.contains(subsequence: secret), "secret \(index) is still in the file") }
        }
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in these bytes.
    func contains(subsequence needle: [UInt8]) -> Bool {
        guard let first = needle.first, needle.count <= count else { return false }
        var index = 0
        while index + needle.count <= count {
            if self[index] == first, self[index..<index + needle.count].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }
}
