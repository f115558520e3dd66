import Apps
import Commands
import EventStore
import Foundation
import Projections
import Testing
import TestSupport

@Suite("The apps' backend, end to end through the store")
struct BackendTests {
    @Test("goal 10 walked one step at a time while a consumer clears each alert: exactly one of each, in order")
    func clearingAsTheyArrive() async throws {
        let f = try DomainFixture()
        let backend = f.backend
        let alerts = EventCollector(f.store.subscribe(from: .start, filter: EventFilter(stream: AppStreams.alerts("ann"), types: [AlertPosted.eventType])).withProgress)
        // A consumer that clears each alert as it arrives.
        let clearer = Task {
            var cleared: [String] = []
            for try await event in f.store.subscribe(from: .start, filter: EventFilter(stream: AppStreams.alerts("ann"), types: [AlertPosted.eventType])) {
                let text = try AlertPosted(recorded: event).alert.text
                _ = try await backend.alerts(.clear(text), user: "ann")
                cleared.append(text)
                if cleared.count == 4 { return cleared }
            }
            return cleared
        }
        _ = try await backend.fitness(.setGoal(10), user: "ann")
        _ = try await backend.fitness(.start, user: "ann")
        for _ in 1...10 {
            _ = try await backend.fitness(.walk(steps: 1, distance: 1), user: "ann")
        }
        let expected = [AlertName.milestone25Percent, .milestone50Percent, .milestone75Percent, .goalComplete].map(\.text)
        #expect(try await withTimeout(.seconds(20), "the consumer to clear four alerts") { try await clearer.value } == expected)
        #expect(try await alerts.take(4).map { try AlertPosted(recorded: $0).alert.text } == expected)
        try await alerts.expectNothingMore(through: try f.store.headPosition())
        #expect(try await backend.alertQueue(user: "ann").count == 0)
        #expect(try await backend.fitnessState(user: "ann").workout.status == .completed)
    }

    @Test("the same alert posted twice gives one queue entry and one event")
    func postedTwice() async throws {
        let f = try DomainFixture()
        let collector = EventCollector(f.store.subscribe(from: .start, filter: EventFilter(stream: AppStreams.alerts("ann"))).withProgress)
        let first = try await f.backend.alerts(.post(text: "Stretch!", severity: .good), user: "ann")
        let second = try await f.backend.alerts(.post(text: "Stretch!", severity: .good), user: "ann")
        #expect(first.recorded.count == 1 && second.recorded.isEmpty)
        #expect(second.state.alerts == [Alert(text: "Stretch!", severity: .good)])
        #expect(try await collector.take(1).map(\.type) == [AlertPosted.eventType])
        // The positive signal: the subscription examined everything up to the head; nothing more came.
        try await collector.expectNothingMore(through: try f.store.headPosition())
    }

    @Test("countdown to Tada! records 3..., 2..., 1..., 🎉 Tada! one second apart on the test clock")
    func countdown() async throws {
        let f = try DomainFixture()
        let backend = f.backend
        let messages = EventCollector(f.store.subscribe(from: .start, filter: EventFilter(stream: AppStreams.chat("main"))).withProgress)
        let countdown = Task { try await backend.countdown(to: "Tada!", user: "ann", room: "main") }
        #expect(try await messages.take(1).map { try MessagePosted(recorded: $0).text } == ["3..."])
        for expected in ["2...", "1...", "🎉 Tada!"] {
            try await f.clock.waitForSleepers(1)
            try await messages.expectNothingMore(through: try f.store.headPosition())
            f.clock.advance(by: .seconds(1))
            #expect(try await messages.take(1).map { try MessagePosted(recorded: $0).text } == [expected])
        }
        let recorded = try await withTimeout(.seconds(10), "the countdown to finish") { try await countdown.value }
        #expect(recorded.map { try? MessagePosted(recorded: $0).text } == ["3...", "2...", "1...", "🎉 Tada!"])
        let seconds = recorded.map { $0.recordedAtMicroseconds / 1_000_000 - 1_767_225_600 }
        #expect(seconds == [0, 1, 2, 3])
        #expect(recorded.allSatisfy { (try? MessagePosted(recorded: $0).kind) == .countdown && (try? MessagePosted(recorded: $0).user) == "ann" })
    }

    @Test("a cancelled countdown stops: nothing after the cancel is recorded")
    func cancelledCountdown() async throws {
        let f = try DomainFixture()
        let backend = f.backend
        let messages = EventCollector(f.store.subscribe(from: .start).withProgress)
        let countdown = Task { try await backend.countdown(to: "Tada!", user: "ann", room: "main") }
        #expect(try await messages.take(1).map { try MessagePosted(recorded: $0).text } == ["3..."])
        try await f.clock.waitForSleepers(1)
        countdown.cancel()
        let recorded = try await withTimeout(.seconds(10), "the cancelled countdown to end") { try await countdown.value }
        #expect(recorded.count == 1)
        f.clock.advance(by: .seconds(5))
        _ = try await backend.chat(.say("marker"), user: "bob", room: "main")
        #expect(try await messages.take(1).map { try MessagePosted(recorded: $0).text } == ["marker"])
        try await messages.expectNothingMore(through: try f.store.headPosition())
    }

    @Test("an empty countdown or message records nothing")
    func emptyTexts() async throws {
        let f = try DomainFixture()
        await #expect(throws: AppError.self) { try await f.backend.countdown(to: "", user: "ann") }
        await #expect(throws: AppError.self) { try await f.backend.chat(.say(""), user: "ann") }
        #expect(try f.store.headPosition() == 0)
    }

    @Test("a reservation for -1 nights is recorded Invalid and the caller gets CampingManager error 5")
    func invalidReservation() async throws {
        let f = try DomainFixture()
        let camper = try await f.backend.campground(.addCamper(fullName: "Johnny Appleseed", phoneNumber: "408-555-1234"))
        #expect(camper.camper == Camper(id: "C1", fullName: "Johnny Appleseed", phoneNumber: "408-555-1234"))
        _ = try await f.backend.campground(.addSite(number: 15, electricity: true, water: true))
        let error = await #expect(throws: AppError.self) {
            try await f.backend.campground(.reserve(site: 15, camperId: "C1", date: try #require(CivilDate("2026-07-01")), nights: -1))
        }
        #expect(error?.code == .recordedInvalid)
        #expect(error?.domain == "CampingManager" && error?.domainCode == 5)
        #expect(error?.message == "Invalid number of days (reservation R1 recorded as Invalid; CampingManager error 5).")
        #expect(error?.recordedEvents.map(\.type) == [ReservationRecorded.eventType])
        let reservation = try #require(try await f.backend.campground(named: "default").reservation("R1"))
        #expect(reservation.status == .invalid && reservation.problem == "Invalid number of days")
        #expect(reservation.dateTo.description == "2026-06-30")
    }

    @Test("the domain projections answer with the documented JSON shapes")
    func queries() async throws {
        let f = try DomainFixture()
        let b = f.backend
        _ = try await b.fitness(.setGoal(400), user: "ann")
        _ = try await b.fitness(.start, user: "ann")
        _ = try await b.fitness(.walk(steps: 100, distance: 80), user: "ann")
        _ = try await b.alerts(.post(text: "Drink water", severity: .good), user: "ann")
        _ = try await b.chat(.presence(.connected), user: "ann", room: "main")
        _ = try await b.chat(.say("hello"), user: "ann", room: "main")
        _ = try await b.chat(.shareLocation("Loch Ness"), user: "bob", room: "main")
        f.clock.advance(by: .seconds(400))
        _ = try await b.chat(.say("still here?"), user: "cat", room: "main")
        for number in [1, 10, 30, 31] { _ = try await b.campground(.addSite(number: number, electricity: number > 9, water: false)) }
        _ = try await b.campground(.addCamper(fullName: "Johnny Appleseed", phoneNumber: "408-555-1234"))
        _ = try await b.campground(.addCamper(fullName: "Bacon Lover", phoneNumber: "910-543-9000"))
        _ = try await b.campground(.reserve(site: 10, camperId: "C1", date: try #require(CivilDate("2026-07-01")), nights: 3))
        _ = try await b.campground(.reserve(site: 30, camperId: "C2", date: try #require(CivilDate("2026-07-02")), nights: 1))
        _ = try await b.campground(.cancel(reservationId: "R2"))
        let runner = try await f.runner()

        #expect(try await runner.query("app-state", parameters: ["user": "ann"]) == [
            "user": "ann", "state": "inProgress", "label": "Pause", "goal": 400, "steps": 100, "distance": 80.0, "nessie": 0.0,
            "alertsSent": ["milestone25Percent"],
        ])
        #expect(try await runner.query("app-state", parameters: ["user": "nobody"])["state"] == "notStarted")
        #expect(try await runner.query("app-state", parameters: ["user": "nobody"])["goal"] == .null)
        let milestone: JSONValue = ["name": "milestone25Percent", "text": "You are 25% to goal. Keep going!", "severity": "good"]
        let water: JSONValue = ["name": nil, "text": "Drink water", "severity": "good"]
        #expect(try await runner.query("alerts", parameters: ["user": "ann"]) == [
            "user": "ann", "count": 2, "top": milestone, "nextUp": water, "alerts": [milestone, water],
        ])
        let messages = try await runner.query("messages", parameters: ["room": "main"])
        #expect(messages["room"] == "main")
        #expect(messages["messages"]?.arrayValue?.map { $0["text"]?.stringValue ?? "" } == ["ann connected", "hello", "📍 Loch Ness", "still here?"])
        #expect(messages["messages"]?.arrayValue?.map { $0["user"] ?? .null } == [.null, "ann", "bob", "cat"])
        #expect(messages["messages"]?.arrayValue?.first?["date"] == "2026-01-01T00:00:00.000000Z")
        #expect(messages["newReader"]?.arrayValue?.map { $0["text"]?.stringValue ?? "" } == ["hello", "📍 Loch Ness", "still here?"])
        #expect(messages["activeUsers"] == 1)  // only cat within 300 s of the newest message
        #expect(messages["messages"]?.arrayValue?.first?["id"]?.stringValue?.count == 36)
        #expect(try await runner.query("campers") == [
            ["id": "C1", "fullName": "Johnny Appleseed", "phoneNumber": "408-555-1234"],
            ["id": "C2", "fullName": "Bacon Lover", "phoneNumber": "910-543-9000"],
        ])
        let campsites = try await runner.query("campsites")
        #expect(campsites["nextSiteNumber"] == 32)
        #expect(campsites["sites"]?.arrayValue?.map { $0["number"] ?? .null } == [1, 10, 30, 31])
        let r1: JSONValue = ["id": "R1", "camper": "C1", "site": 10, "dateFrom": "2026-07-01", "dateTo": "2026-07-04", "status": "Reserved", "problem": nil]
        let r2: JSONValue = ["id": "R2", "camper": "C2", "site": 30, "dateFrom": "2026-07-02", "dateTo": "2026-07-03", "status": "Cancelled", "problem": nil]
        #expect(try await runner.query("reservations") == [r1, r2])
        #expect(try await runner.query("reservations", parameters: ["camper": "C2"]) == [r2])
        #expect(try await runner.query("reservations", parameters: ["site": "10"]) == [r1])
        #expect(try await runner.query("reservations", parameters: ["date": "2026-07-02"]) == [r1])
        #expect(try await runner.query("reservations", parameters: ["date": "2026-07-04"]) == [])
        await #expect(throws: ProjectionError.self) { try await runner.query("reservations", parameters: ["date": "July"]) }
    }

    @Test("concurrent commands on one workout retry on conflicts and lose nothing")
    func retriesOnConflict() async throws {
        let f = try DomainFixture(maximumAttempts: 50)
        _ = try await f.backend.fitness(.setGoal(1_000))
        _ = try await f.backend.fitness(.start)
        let backend = f.backend
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<12 {
                group.addTask { _ = try await backend.fitness(.walk(steps: 10, distance: 1)) }
            }
            try await group.waitForAll()
        }
        let workout = try await backend.fitnessState().workout
        #expect(workout.steps == 120)
        #expect(workout.sentAlerts == [])
        #expect(try f.store.readStream(AppStreams.fitness("default")).filter { $0.type == PedometerUpdated.eventType }.count == 12)
    }

    @Test("keys are checked: an empty user, room or campground is refused")
    func keys() async throws {
        let f = try DomainFixture()
        await #expect(throws: AppError.self) { try await f.backend.fitness(.restart, user: "") }
        await #expect(throws: AppError.self) { try await f.backend.chat(.say("x"), user: "ann", room: "") }
        await #expect(throws: AppError.self) { try await f.backend.campground(.addSite(number: 1, electricity: false, water: false), campground: "a\nb") }
        #expect(try f.store.headPosition() == 0)
    }
}
