import EventStore
import Foundation
import HTTPServer
import Hummingbird
import HummingbirdTesting
import Testing

/// What an app route answered: its status and its body parsed as JSON.
struct AppReply {
    let status: HTTPResponse.Status
    let text: String
    let contentType: String?

    /// The body as an array of event objects (empty when it is not one).
    var events: [[String: Any]] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [[String: Any]] ?? []
    }

    /// The body as an object (empty when it is not one).
    var object: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    /// The events' (stream, version, type) triples.
    var summary: [String] {
        events.map { "\($0["stream"] ?? "?")@\($0["version"] ?? "?") \($0["type"] ?? "?")" }
    }

    /// The `data` of the event at `index`.
    func data(_ index: Int) -> [String: Any] {
        index < events.count ? events[index]["data"] as? [String: Any] ?? [:] : [:]
    }
}

/// A JSON value's text with sorted keys, to compare parsed bodies with expected dictionaries.
func canonical(_ value: [String: Any]) -> String {
    guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]) else { return "<not JSON: \(value)>" }
    return String(decoding: data, as: UTF8.self)
}

extension TestClientProtocol {
    /// POSTs `json` to `path` and returns the reply.
    func post(_ path: String, _ json: String) async throws -> AppReply {
        try await execute(uri: path, method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: json)) { response in
            AppReply(status: response.status, text: String(buffer: response.body), contentType: response.headers[.contentType])
        }
    }

    /// The store's head, through GET /health.
    func head() async throws -> Int {
        try await execute(uri: "/health", method: .get) { response in
            (try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])?["head"] as? Int ?? -1
        }
    }
}

@Suite("The apps' command routes: esctl's domain commands over HTTP")
struct AppRouteTests {
    @Test("Fitness: goal, start, walk past 25% (the alert), and refusals that record nothing")
    func fitness() async throws {
        try await ServerFixture.with { _, client in
            // Given a fresh store, when a workout is started without a goal, then 422 goalNotSet and nothing is recorded.
            let refused = try await client.post("/apps/fitness/start", "{}")
            #expect(refused.status == .unprocessableContent)
            #expect(canonical(refused.object) == canonical(["error": "Set a goal to start.", "code": "goalNotSet"]))
            #expect(try await client.head() == 0)

            // When the goal is set, started and 30 of 100 steps walked, then each answers 201 with the events recorded.
            let goal = try await client.post("/apps/fitness/goal", #"{"steps":100}"#)
            #expect(goal.status == .created)
            #expect(goal.contentType == "application/json; charset=utf-8")
            #expect(goal.summary == ["fitness-default@1 GoalSet"])
            #expect(canonical(goal.data(0)) == canonical(["goal": 100]))
            #expect(goal.events.first?.keys.sorted() == ["data", "id", "metadata", "position", "recordedAt", "stream", "type", "version"])

            let start = try await client.post("/apps/fitness/start", "")
            #expect(start.status == .created)
            #expect(start.summary == ["fitness-default@2 WorkoutStarted"])

            let walk = try await client.post("/apps/fitness/walk", #"{"user":"default","steps":30,"distance":12.5}"#)
            #expect(walk.status == .created)
            #expect(walk.summary == ["fitness-default@3 PedometerUpdated", "fitness-default@4 AlertTriggered", "alerts-default@1 AlertPosted"])
            #expect(canonical(walk.data(0)) == canonical(["steps": 30, "distance": 12.5]))

            // When the goal is set again while running, then 422 invalidState with the domain's sentence.
            let late = try await client.post("/apps/fitness/goal", #"{"steps":5}"#)
            #expect(late.status == .unprocessableContent)
            #expect(late.object["code"] as? String == "invalidState")
            #expect(late.object["error"] as? String == "The goal can be set only before the workout starts; restart it first (it is inProgress).")

            // And another user's workout is their own.
            let other = try await client.post("/apps/fitness/goal", #"{"user":"ada","steps":7}"#)
            #expect(other.summary == ["fitness-ada@1 GoalSet"])
            #expect(try await client.head() == 6)
        }
    }

    @Test("Bodies are read strictly: unknown, repeated, mistyped and missing fields are 400 naming the field, and record nothing")
    func strictBodies() async throws {
        try await ServerFixture.with { _, client in
            let cases: [(path: String, body: String, field: String?, error: String)] = [
                ("/apps/fitness/goal", #"{"steps":10,"usr":"x"}"#, "usr",
                 "The field 'usr' is not one POST /apps/fitness/goal takes; its fields are 'steps', 'user'."),
                ("/apps/fitness/goal", #"{"steps":"10"}"#, "steps", "The field 'steps' of POST /apps/fitness/goal must be a whole number, not a string."),
                ("/apps/fitness/goal", #"{"steps":1.5}"#, "steps",
                 "The field 'steps' of POST /apps/fitness/goal must be a whole number, not a number with a fraction (or one too large)."),
                ("/apps/fitness/goal", "{}", "steps", "The field 'steps' is missing from the body of POST /apps/fitness/goal; give it as a whole number."),
                ("/apps/fitness/goal", #"{"steps":1,"steps":2}"#, "steps", "The field 'steps' appears twice in the body of POST /apps/fitness/goal; give it once."),
                ("/apps/fitness/start", "[1]", nil, "The body of POST /apps/fitness/start must be a JSON object, with the fields 'user'."),
                ("/apps/fitness/start", #"{"user":null}"#, "user", "The field 'user' of POST /apps/fitness/start must be a string, not null."),
                ("/apps/chat/say", #"{"text":"hi"}"#, "user", "The field 'user' is missing from the body of POST /apps/chat/say; give it as a string."),
                ("/apps/camp/add-site", #"{"number":1,"water":"yes"}"#, "water", "The field 'water' of POST /apps/camp/add-site must be true or false, not a string."),
                ("/apps/alerts/post", #"{"text":"hi","severity":"meh"}"#, "severity", "The severity must be \"good\" or \"bad\"."),
                ("/apps/alerts/clear", #"{"alert":"x","all":true}"#, "alert", "Name one alert (its name or text) in 'alert', or give \"all\": true."),
                ("/apps/camp/reserve", #"{"site":1,"camper":"c","date":"2024-13-01","nights":1}"#, "date",
                 "The date '2024-13-01' is not a date; give it as YYYY-MM-DD."),
                ("/apps/chat/countdown", #"{"user":"u","text":"go","interval":11}"#, "interval",
                 "The interval must be from 0 to 10 seconds (esctl chat countdown allows longer)."),
            ]
            for (path, body, field, error) in cases {
                // Given a body that breaks the command's shape, when posted, then 400 badRequest with the
                // sentence and the field at fault.
                let reply = try await client.post(path, body)
                #expect(reply.status == .badRequest, "\(path) \(body)")
                var expected: [String: Any] = ["error": error, "code": "badRequest"]
                if let field { expected["field"] = field }
                #expect(canonical(reply.object) == canonical(expected), "\(path) \(body)")
            }
            let notJSON = try await client.post("/apps/fitness/goal", "{steps:1}")
            #expect(notJSON.status == .badRequest)
            #expect(notJSON.object["code"] as? String == "badRequest")
            #expect((notJSON.object["error"] as? String)?.hasPrefix("The body of POST /apps/fitness/goal is not JSON (") == true)
            // Then nothing was recorded by any of them.
            #expect(try await client.head() == 0)
        }
    }

    @Test("Alerts: post, the same text again records nothing (200 []), clear, and an unknown alert is 404")
    func alerts() async throws {
        try await ServerFixture.with { _, client in
            let posted = try await client.post("/apps/alerts/post", #"{"text":"Drink water","severity":"bad"}"#)
            #expect(posted.status == .created)
            #expect(posted.summary == ["alerts-default@1 AlertPosted"])
            let again = try await client.post("/apps/alerts/post", #"{"text":"Drink water"}"#)
            #expect(again.status == .ok)
            #expect(again.text == "[]\n")

            let unknown = try await client.post("/apps/alerts/clear", #"{"alert":"Nope"}"#)
            #expect(unknown.status == .notFound)
            #expect(canonical(unknown.object) == canonical(["error": "No alert 'Nope' is queued; GET /projections/alerts?user=... lists them.", "code": "notFound"]))

            let cleared = try await client.post("/apps/alerts/clear", #"{"alert":"Drink water"}"#)
            #expect(cleared.status == .created)
            #expect(cleared.summary == ["alerts-default@2 AlertCleared"])
            let empty = try await client.post("/apps/alerts/clear", #"{"all":true}"#)
            #expect(empty.status == .ok)
            #expect(empty.text == "[]\n")
            let blank = try await client.post("/apps/alerts/post", #"{"text":"  "}"#)
            #expect(blank.status == .badRequest)
            #expect(canonical(blank.object) == canonical(["error": "The alert text is empty; give some text.", "code": "invalidInput"]))
            #expect(try await client.head() == 2)
        }
    }

    @Test("Chat: say, location, presence and a countdown, each in its room")
    func chat() async throws {
        try await ServerFixture.with { _, client in
            let said = try await client.post("/apps/chat/say", #"{"user":"ada","text":"hello"}"#)
            #expect(said.status == .created)
            #expect(said.summary == ["chat-default@1 MessagePosted"])
            #expect(said.data(0)["text"] as? String == "hello")
            #expect(said.data(0)["user"] as? String == "ada")

            let location = try await client.post("/apps/chat/location", #"{"user":"ada","room":"lab","address":"Main St"}"#)
            #expect(location.summary == ["chat-lab@1 MessagePosted"])
            #expect(location.data(0)["text"] as? String == "📍 Main St")
            for (route, presence) in [("connect", "connected"), ("away", "wentAway"), ("back", "cameBack")] {
                let reply = try await client.post("/apps/chat/\(route)", #"{"user":"bob","room":"lab"}"#)
                #expect(reply.status == .created, "\(route)")
                #expect(reply.summary.first?.hasSuffix("PresenceChanged") == true, "\(route)")
                #expect(reply.data(0)["presence"] as? String == presence, "\(route)")
            }
            let countdown = try await client.post("/apps/chat/countdown", #"{"user":"ada","text":"launch","interval":0}"#)
            #expect(countdown.status == .created)
            #expect(countdown.events.map { ($0["data"] as? [String: Any])?["text"] as? String ?? "?" } == ["3...", "2...", "1...", "🎉 launch"])

            let empty = try await client.post("/apps/chat/say", #"{"user":"ada","text":""}"#)
            #expect(empty.status == .badRequest)
            #expect(canonical(empty.object) == canonical(["error": "The message is empty; give some text.", "code": "invalidInput"]))
            #expect(try await client.head() == 9)
        }
    }

    @Test("Camp: campers, sites, reservations; an Invalid reservation is recorded and answers 422 with it")
    func camp() async throws {
        try await ServerFixture.with { _, client in
            let camper = try await client.post("/apps/camp/add-camper", #"{"name":"Ada Lovelace","phone":"555"}"#)
            #expect(camper.status == .created)
            #expect(camper.summary == ["campground-default@1 CamperAdded"])
            let camperId = try #require(camper.data(0)["camperId"] as? String)

            let site = try await client.post("/apps/camp/add-site", #"{"number":1,"water":true}"#)
            #expect(site.status == .created)
            #expect(canonical(site.data(0)) == canonical(["number": 1, "electricity": false, "water": true]))
            let duplicate = try await client.post("/apps/camp/add-site", #"{"number":1}"#)
            #expect(duplicate.status == .unprocessableContent)
            #expect(canonical(duplicate.object) == canonical(["error": "Site 1 already exists; the next free number is 2.", "code": "duplicate"]))

            let reserved = try await client.post("/apps/camp/reserve", #"{"site":1,"camper":"\#(camperId)","date":"2024-07-01","nights":3}"#)
            #expect(reserved.status == .created)
            #expect(reserved.data(0)["status"] as? String == "Reserved")

            // When a stay overlaps it, then it is recorded as Invalid and the answer is 422 with the event.
            let overlap = try await client.post("/apps/camp/reserve", #"{"site":1,"camper":"\#(camperId)","date":"2024-07-02","nights":1}"#)
            #expect(overlap.status == .unprocessableContent)
            #expect(overlap.object["code"] as? String == "recordedInvalid")
            #expect(overlap.object["domain"] as? String == "CampingManager")
            #expect(overlap.object["domainCode"] as? Int == 6)
            let recorded = overlap.object["recorded"] as? [[String: Any]] ?? []
            #expect(recorded.map { "\($0["stream"] ?? "")@\($0["version"] ?? "") \($0["type"] ?? "")" } == ["campground-default@4 ReservationRecorded"])
            let invalidId = (recorded.first?["data"] as? [String: Any])?["reservationId"] as? String ?? "?"
            #expect(
                overlap.object["error"] as? String
                    == "Site already reserved for those dates (reservation \(invalidId) recorded as Invalid; CampingManager error 6).")
            let noNights = try await client.post("/apps/camp/reserve", #"{"site":1,"camper":"\#(camperId)","date":"2024-08-01","nights":0}"#)
            #expect(noNights.status == .unprocessableContent)
            #expect(noNights.object["domainCode"] as? Int == 5)

            let unknownSite = try await client.post("/apps/camp/reserve", #"{"site":9,"camper":"\#(camperId)","date":"2024-07-01","nights":1}"#)
            #expect(unknownSite.status == .notFound)
            #expect(canonical(unknownSite.object) == canonical(["error": "There is no site 9; GET /projections/campsites?campground=... lists them.", "code": "notFound"]))
            let cancelled = try await client.post("/apps/camp/cancel", #"{"reservation":"\#(reserved.data(0)["reservationId"] as? String ?? "?")"}"#)
            #expect(cancelled.status == .created)
            #expect(cancelled.summary == ["campground-default@6 ReservationCancelled"])
            let deleted = try await client.post("/apps/camp/delete-site", #"{"number":1}"#)
            #expect(deleted.summary == ["campground-default@7 SiteDeleted"])
            #expect(try await client.head() == 7)
        }
    }

    @Test("Camp: a camper recorded in CamperAdded's version 1 shape is served in version 2's, by the stream's page and the campers projection")
    func camperEvolution() async throws {
        try await ServerFixture.with { server, client in
            // Given a camper recorded in version 1's shape, as stores written before CamperAdded evolved hold it
            let v1 = #"{"camperId":"C1","fullName":"Ada Lovelace","phoneNumber":"555"}"#
            _ = try await server.store.append(to: "campground-default", events: [NewEvent(type: "CamperAdded", data: Data(v1.utf8))])
            // When the stream is read, then its data is version 2's and its schema version the recorded 1 (not shown)
            try await client.execute(uri: "/streams/campground-default", method: .get) { response in
                #expect(response.text.contains(#""data":{"camperId":"C1","contact":{"fullName":"Ada Lovelace","phoneNumber":"555"}}"#), "\(response.text)")
                #expect(!response.text.contains("schemaVersion"), "\(response.text)")
            }
            // And the read model and the next command know the camper
            try await client.execute(uri: "/projections/campers", method: .get) { response in
                #expect(response.text == #"[{"id":"C1","fullName":"Ada Lovelace","phoneNumber":"555"}]"# + "\n", "\(response.text)")
            }
            let next = try await client.post("/apps/camp/add-camper", #"{"name":"Bo","phone":"1"}"#)
            #expect(next.data(0)["camperId"] as? String == "C2")
        }
    }

    @Test("Color: a key press and a setting answer the display, as esctl color --json prints it")
    func color() async throws {
        try await ServerFixture.with { _, client in
            let set = try await client.post("/apps/color/set", ##"{"hex":"#006636a8"}"##)
            #expect(set.status == .created)
            #expect(
                set.text
                    == ##"{"calculator":"default","hexText":"#006636A8","rgboText":"0, 102, 54, 168","name":"rwGreen 65%","color":{"red":0,"green":102,"blue":54,"opacity":168},"derived":true}"##
                    + "\n")
            let pressed = try await client.post("/apps/color/press", #"{"calculator":"k","key":"backspace"}"#)
            #expect(pressed.status == .created)
            #expect(pressed.object["hexText"] as? String == "#0080F")
            #expect(pressed.object["derived"] as? Bool == false)
            let bad = try await client.post("/apps/color/press", #"{"key":"G"}"#)
            #expect(bad.status == .badRequest)
            #expect(canonical(bad.object) == canonical(["error": "'G' is not a key; press 0-9, A-F, backspace or clear.", "code": "invalidInput"]))
            #expect(try await client.head() == 2)
        }
    }
}
