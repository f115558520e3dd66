import Apps
import Commands
import EventStore
import EventStoreTesting
import Foundation
import Projections
import Testing

/// A long random mix of commands across the apps, caught up now and then: a rebuild gives the
/// same hash as the live state, and as the state as of the head, for every domain projection.
@Suite("Deterministic replay across the domains, on every backend")
struct DomainReplayConformanceTests {
    @Test("random commands, then rebuild: identical hashes", arguments: Backend.allCases, [UInt64(3), 11, 97])
    func replay(_ backend: Backend, seed: UInt64) async throws {
        try await withDomain(backend) { f in
            // Given seeded random traffic of every app, caught up at random moments
            let runner = try await f.runner()
            try await domainTraffic(f.backend, clock: f.clock, seed: seed) { random in
                if Int.random(in: 0..<25, using: &random) == 0 { try await runner.catchUp() }
            }
            try await runner.catchUp()
            let head = try await f.store.headPosition()
            #expect(head > 100, "seed \(seed) recorded only \(head) events")
            // Then each projection's live state is its rebuild's and its state as of the head
            for projection in AppCatalog.apps {
                let live = try await runner.storedHash(of: projection.name)
                let asOfHead = try await StateHash.of(projection, in: try await runner.state(of: projection.name, asOf: head).reader)
                let rebuilt = try await runner.rebuild([projection.name])[0].hash
                #expect(live == rebuilt, "seed \(seed), \(projection.name)")
                #expect(live == asOfHead, "seed \(seed), \(projection.name)")
            }
        }
    }
}

@Suite("The apps' backend, end to end through the store, on every backend")
struct AppBackendConformanceTests {
    @Test("goal 10 walked one step at a time while a consumer clears each alert: exactly one of each, in order", arguments: Backend.allCases)
    func clearingAsTheyArrive(_ backend: Backend) async throws {
        try await withDomain(backend) { f in
            let apps = f.backend
            let alerts = EventCollector(f.store.subscribe(from: .start, filter: EventFilter(stream: AppStreams.alerts("ann"), types: [AlertPosted.eventType])).withProgress)
            // A consumer that clears each alert as it arrives.
            let clearer = Task {
                var cleared: [String] = []
                for try await event in f.store.subscribe(from: .start, filter: EventFilter(stream: AppStreams.alerts("ann"), types: [AlertPosted.eventType])) {
                    let text = try AlertPosted(recorded: event).alert.text
                    _ = try await apps.alerts(.clear(text), user: "ann")
                    cleared.append(text)
                    if cleared.count == 4 { return cleared }
                }
                return cleared
            }
            _ = try await apps.fitness(.setGoal(10), user: "ann")
            _ = try await apps.fitness(.start, user: "ann")
            for _ in 1...10 {
                _ = try await apps.fitness(.walk(steps: 1, distance: 1), user: "ann")
            }
            let expected = [AlertName.milestone25Percent, .milestone50Percent, .milestone75Percent, .goalComplete].map(\.text)
            #expect(try await withTimeout(.seconds(20), "the consumer to clear four alerts") { try await clearer.value } == expected)
            #expect(try await alerts.take(4).map { try AlertPosted(recorded: $0).alert.text } == expected)
            try await alerts.expectNothingMore(through: try await f.store.headPosition())
            #expect(try await apps.alertQueue(user: "ann").count == 0)
            #expect(try await apps.fitnessState(user: "ann").workout.status == .completed)
        }
    }

    @Test("the same alert posted twice gives one queue entry and one event", arguments: Backend.allCases)
    func postedTwice(_ backend: Backend) async throws {
        try await withDomain(backend) { f in
            let collector = EventCollector(f.store.subscribe(from: .start, filter: EventFilter(stream: AppStreams.alerts("ann"))).withProgress)
            let first = try await f.backend.alerts(.post(text: "Stretch!", severity: .good), user: "ann")
            let second = try await f.backend.alerts(.post(text: "Stretch!", severity: .good), user: "ann")
            #expect(first.recorded.count == 1 && second.recorded.isEmpty)
            #expect(second.state.alerts == [Alert(text: "Stretch!", severity: .good)])
            #expect(try await collector.take(1).map(\.type) == [AlertPosted.eventType])
            // The positive signal: the subscription examined everything up to the head; nothing more came.
            try await collector.expectNothingMore(through: try await f.store.headPosition())
        }
    }

    @Test("countdown to Tada! records 3..., 2..., 1..., 🎉 Tada! one second apart on the test clock", arguments: Backend.allCases)
    func countdown(_ backend: Backend) async throws {
        try await withDomain(backend) { f in
            let apps = f.backend
            let messages = EventCollector(f.store.subscribe(from: .start, filter: EventFilter(stream: AppStreams.chat("main"))).withProgress)
            let countdown = Task { try await apps.countdown(to: "Tada!", user: "ann", room: "main") }
            #expect(try await messages.take(1).map { try MessagePosted(recorded: $0).text } == ["3..."])
            for expected in ["2...", "1...", "🎉 Tada!"] {
                try await f.clock.waitForSleepers(1)
                try await messages.expectNothingMore(through: try await f.store.headPosition())
                f.clock.advance(by: .seconds(1))
                #expect(try await messages.take(1).map { try MessagePosted(recorded: $0).text } == [expected])
            }
            let recorded = try await withTimeout(.seconds(10), "the countdown to finish") { try await countdown.value }
            #expect(recorded.map { try? MessagePosted(recorded: $0).text } == ["3...", "2...", "1...", "🎉 Tada!"])
            let seconds = recorded.map { $0.recordedAtMicroseconds / 1_000_000 - 1_767_225_600 }
            #expect(seconds == [0, 1, 2, 3])
            #expect(recorded.allSatisfy { (try? MessagePosted(recorded: $0).kind) == .countdown && (try? MessagePosted(recorded: $0).user) == "ann" })
        }
    }

    @Test("a cancelled countdown stops: nothing after the cancel is recorded", arguments: Backend.allCases)
    func cancelledCountdown(_ backend: Backend) async throws {
        try await withDomain(backend) { f in
            let apps = f.backend
            let messages = EventCollector(f.store.subscription(from: .start).withProgress)
            let countdown = Task { try await apps.countdown(to: "Tada!", user: "ann", room: "main") }
            #expect(try await messages.take(1).map { try MessagePosted(recorded: $0).text } == ["3..."])
            try await f.clock.waitForSleepers(1)
            countdown.cancel()
            let recorded = try await withTimeout(.seconds(10), "the cancelled countdown to end") { try await countdown.value }
            #expect(recorded.count == 1)
            f.clock.advance(by: .seconds(5))
            _ = try await apps.chat(.say("marker"), user: "bob", room: "main")
            #expect(try await messages.take(1).map { try MessagePosted(recorded: $0).text } == ["marker"])
            try await messages.expectNothingMore(through: try await f.store.headPosition())
        }
    }

    @Test("an empty countdown or message records nothing", arguments: Backend.allCases)
    func emptyTexts(_ backend: Backend) async throws {
        try await withDomain(backend) { f in
            await #expect(throws: AppError.self) { try await f.backend.countdown(to: "", user: "ann") }
            await #expect(throws: AppError.self) { try await f.backend.chat(.say(""), user: "ann") }
            let head = try await f.store.headPosition()
            #expect(head == 0)
        }
    }

    @Test("a reservation for -1 nights is recorded Invalid and the caller gets CampingManager error 5", arguments: Backend.allCases)
    func invalidReservation(_ backend: Backend) async throws {
        try await withDomain(backend) { f in
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
    }

    @Test("a room's active users: those seen within 300 s of its newest event and not gone away, read from the window only", arguments: Backend.allCases)
    func activeUsers(_ backend: Backend) async throws {
        try await withDomain(backend) { f in
            let b = f.backend
            // Given ann long ago, bob who went away, cat seen again late, dan late, eve who
            // connected and went away late
            _ = try await b.chat(.presence(.connected), user: "ann", room: "r")
            f.clock.advance(by: .seconds(10))
            _ = try await b.chat(.say("hi"), user: "bob", room: "r")
            f.clock.advance(by: .seconds(10))
            _ = try await b.chat(.presence(.connected), user: "cat", room: "r")
            f.clock.advance(by: .seconds(10))
            _ = try await b.chat(.presence(.wentAway), user: "bob", room: "r")
            f.clock.advance(by: .seconds(370))
            _ = try await b.chat(.say("late"), user: "dan", room: "r")
            f.clock.advance(by: .seconds(10))
            _ = try await b.chat(.say("back"), user: "cat", room: "r")
            _ = try await b.chat(.presence(.connected), user: "eve", room: "r")
            _ = try await b.chat(.presence(.wentAway), user: "eve", room: "r")
            let runner = try await f.runner()
            // When the room is asked, then cat and dan are active, by name
            let room = try await runner.query("messages", parameters: ["room": "r"])
            #expect(room["activeUsers"] == 2)
            #expect(room["active"] == ["cat", "dan"])
            // And the time index holds one sighting per user, not one per event
            #expect(try await runner.read("messages") { try await $0.rowCount("recent") } == 5)
            // And a rebuild answers the same
            _ = try await runner.rebuild(["messages"])
            #expect(try await runner.query("messages", parameters: ["room": "r"]) == room)
        }
    }

    @Test("the domain projections answer with the documented JSON shapes", arguments: Backend.allCases)
    func queries(_ backend: Backend) async throws {
        try await withDomain(backend) { f in
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
    }

    @Test("concurrent commands on one workout retry on conflicts and lose nothing", arguments: Backend.allCases)
    func retriesOnConflict(_ backend: Backend) async throws {
        try await withDomain(backend, maximumAttempts: 50) { f in
            _ = try await f.backend.fitness(.setGoal(1_000))
            _ = try await f.backend.fitness(.start)
            let apps = f.backend
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<12 {
                    group.addTask { _ = try await apps.fitness(.walk(steps: 10, distance: 1)) }
                }
                try await group.waitForAll()
            }
            let workout = try await apps.fitnessState().workout
            #expect(workout.steps == 120)
            #expect(workout.sentAlerts == [])
            #expect(try await f.store.events(of: AppStreams.fitness("default")).filter { $0.type == PedometerUpdated.eventType }.count == 12)
        }
    }

    @Test("keys are checked: an empty user, room or campground is refused", arguments: Backend.allCases)
    func keys(_ backend: Backend) async throws {
        try await withDomain(backend) { f in
            await #expect(throws: AppError.self) { try await f.backend.fitness(.restart, user: "") }
            await #expect(throws: AppError.self) { try await f.backend.chat(.say("x"), user: "ann", room: "") }
            await #expect(throws: AppError.self) { try await f.backend.campground(.addSite(number: 1, electricity: false, water: false), campground: "a\nb") }
            let head = try await f.store.headPosition()
            #expect(head == 0)
        }
    }
}

/// For every app: the state folded from a snapshot and the events after it equals the state
/// folded from the first event, over random command sequences and with snapshots written often.
@Suite("The apps' snapshots, on every backend")
struct AppSnapshotConformanceTests {
    /// The state through the handler's path for any `StreamDecider`: no snapshot, every event.
    func folded<D: StreamDecider>(_ handler: CommandHandler, _ decider: D) async throws -> D.State {
        try await handler.state(of: decider).state
    }

    @Test("random commands with a snapshot every few events: snapshot + tail == the whole fold, for every app", arguments: Backend.allCases, [UInt64(5), 17])
    func snapshotPlusTail(_ backend: Backend, seed: UInt64) async throws {
        try await withDomain(backend, snapshotInterval: 3) { f in
            let b = f.backend
            var random = SeededGenerator(seed: seed)
            for step in 0..<300 {
                let user = ["ann", "bob"].randomElement(using: &random) ?? "ann"
                do {
                    switch Int.random(in: 0..<16, using: &random) {
                    case 0: _ = try await b.fitness(.setGoal(Int.random(in: 1...60, using: &random)), user: user)
                    case 1, 2: _ = try await b.fitness(.start, user: user)
                    case 3: _ = try await b.fitness(.restart, user: user)
                    case 4, 5: _ = try await b.fitness(.walk(steps: Int.random(in: 0...15, using: &random), distance: Double(Int.random(in: 0...9, using: &random))), user: user)
                    case 6: _ = try await b.fitness(.moveNessie(Double(Int.random(in: 0...40, using: &random))), user: user)
                    case 7: _ = try await b.alerts(.post(text: ["Drink", "Stretch"].randomElement(using: &random) ?? "Drink", severity: .good), user: user)
                    case 8: _ = try await b.alerts(.clearAll, user: user)
                    case 9: _ = try await b.campground(.addCamper(fullName: "Camper \(step)", phoneNumber: "555"), campground: user)
                    case 10: _ = try await b.campground(.addSite(number: Int.random(in: 1...6, using: &random), electricity: true, water: false), campground: user)
                    case 11:
                        _ = try await b.campground(.reserve(
                            site: Int.random(in: 1...6, using: &random), camperId: "C\(Int.random(in: 1...3, using: &random))",
                            date: CivilDate(day: 20_600 + Int64.random(in: 0...20, using: &random)), nights: Int.random(in: -1...4, using: &random)),
                            campground: user)
                    case 12: _ = try await b.campground(.cancel(reservationId: "R\(Int.random(in: 1...5, using: &random))"), campground: user)
                    case 13: _ = try await b.color(.press(["1", "a", "F", "backspace", "clear"].randomElement(using: &random) ?? "clear"), calculator: user)
                    case 14: _ = try await b.color(.set(["#006636AA", "abc", "ff0000"].randomElement(using: &random) ?? "abc"), calculator: user)
                    default: _ = try await f.store.append(to: "fitness-\(user)", events: [NewEvent(type: "PedometerUpdated", data: Data(#"{"steps":"x"}"#.utf8))])
                    }
                } catch is AppError {
                    // Refusals are part of the mix.
                }
                // Now and then, compare every app's state both ways.
                if step % 25 == 24 {
                    for user in ["ann", "bob"] {
                        #expect(try await b.fitnessState(user: user) == (try await folded(b.handler, FitnessDecider(user: user))), "fitness \(user) at \(step)")
                        #expect(try await b.alertQueue(user: user) == (try await folded(b.handler, AlertDecider(user: user))), "alerts \(user) at \(step)")
                        #expect(try await b.campground(named: user) == (try await folded(b.handler, CampgroundDecider(campground: user))), "campground \(user) at \(step)")
                        #expect(try await b.colorDisplay(calculator: user) == (try await folded(b.handler, ColorDecider(calculator: user))), "color \(user) at \(step)")
                    }
                }
            }
            let snapshots = try await Snapshots.list(in: f.store)
            #expect(Set(snapshots.map(\.decider)) == ["fitness", "alerts", "campground", "color"])
        }
    }
}

/// The color calculator through the backend, the projection, history and a subscription.
@Suite("Color calculator, on every backend")
struct ColorAppConformanceTests {
    @Test("a calculator never touched answers the starting state; presses and settings move it", arguments: Backend.allCases)
    func projection(_ backend: Backend) async throws {
        try await withDomain(backend) { f in
            let runner = try await f.runner()
            #expect(try await runner.query("color", parameters: ["calculator": "new"]) == [
                "calculator": "new", "hexText": "#0080FF", "rgboText": "0, 128, 255, 255", "name": "aqua 100%",
                "color": ["red": 0, "green": 128, "blue": 255, "opacity": 255], "derived": true,
            ])
            _ = try await f.backend.color(.set("#006636AA"), calculator: "c")
            #expect(try await runner.query("color", parameters: ["calculator": "c"])["name"] == "rwGreen 66%")
            _ = try await f.backend.color(.press("backspace"), calculator: "c")
            let after = try await runner.query("color", parameters: ["calculator": "c"])
            #expect(after["hexText"] == "#006636A" && after["derived"] == false && after["rgboText"] == "---, ---, ---, ---")
            #expect(after["color"] == ["red": 255, "green": 255, "blue": 255, "opacity": 255])
            // As of the setting, the display was the setting.
            #expect(try await runner.query("color", parameters: ["calculator": "c"], asOf: 1)["hexText"] == "#006636AA")
            let live = try await runner.storedHash(of: "color")
            #expect(try await runner.rebuild(["color"]).map(\.hash) == [live])
        }
    }

    @Test("a key press reaches a subscriber, and the projection shows it as soon as it is awaited (no sleeps)", arguments: Backend.allCases)
    func subscription(_ backend: Backend) async throws {
        try await withDomain(backend) { f in
            let runner = try await f.runner()
            let presses = EventCollector(f.store.subscribe(from: .start, filter: EventFilter(stream: AppStreams.color("c"))).withProgress)
            _ = try await f.backend.color(.press("clear"), calculator: "c")
            _ = try await f.backend.color(.press("a"), calculator: "c")
            let received = try await presses.take(2)
            #expect(received.map(\.type) == ["KeyPressed", "KeyPressed"])
            #expect(try await runner.query("color", parameters: ["calculator": "c"], asOf: received[1].position)["hexText"] == "#A")
            #expect(try await runner.query("color", parameters: ["calculator": "c"])["hexText"] == "#A")
            try await presses.expectNothingMore(through: try await f.store.headPosition())
        }
    }

    @Test("a hand-appended event the calculator cannot read is passed over by the decider and the projection", arguments: Backend.allCases)
    func poison(_ backend: Backend) async throws {
        try await withDomain(backend) { f in
            _ = try await f.store.append(to: AppStreams.color("c"), events: [NewEvent(type: "KeyPressed", data: Data(#"{"key":"Z"}"#.utf8))])
            let outcome = try await f.backend.color(.press("clear"), calculator: "c")
            #expect(outcome.passedOver.map(\.position) == [1])
            let runner = try await f.runner()
            #expect(try await runner.query("color", parameters: ["calculator": "c"])["hexText"] == "#")
            #expect(try await runner.statuses().first { $0.name == "color" }?.eventsSkipped == 1)
        }
    }
}

/// The apps' lists, paged while appends run: every item once, in order.
@Suite("The apps' paged queries, on every backend")
struct PagedQueryConformanceTests {
    @Test("a room's messages paged from the newest back, while messages keep coming: each once, in order", arguments: Backend.allCases)
    func messagesWhileAppending(_ backend: Backend) async throws {
        try await withDomain(backend) { f in
            for n in 1...40 { _ = try await f.backend.chat(.say("m\(n)"), user: "ann", room: "r") }
            let runner = try await f.runner()
            let first = try await runner.query("messages", parameters: ["room": "r", "limit": "6"])
            var texts = first["messages"]?.arrayValue?.compactMap { $0["text"]?.stringValue } ?? []
            #expect(texts == (35...40).map { "m\($0)" })
            var cursor = first["next"]?.intValue
            var more = 41
            while let before = cursor {
                // Newer messages arrive between pages; the pages going back do not see them.
                _ = try await f.backend.chat(.say("m\(more)"), user: "bob", room: "r")
                more += 1
                let page = try await runner.query("messages", parameters: ["room": "r", "limit": "6", "before": String(before)])
                texts = (page["messages"]?.arrayValue?.compactMap { $0["text"]?.stringValue } ?? []) + texts
                cursor = page["next"]?.intValue
            }
            #expect(texts == (1...40).map { "m\($0)" })
            // And forwards from the newest seen, the new ones, once each.
            let m40 = try await f.store.events().last { String(decoding: $0.data, as: UTF8.self).contains(#""text":"m40""#) }
            var after: Int64? = try #require(m40).position == 0 ? nil : Int64(try #require(m40).position)
            var newer: [String] = []
            while let cursor = after {
                let page = try await runner.query("messages", parameters: ["room": "r", "limit": "4", "after": String(cursor)])
                newer += page["messages"]?.arrayValue?.compactMap { $0["text"]?.stringValue } ?? []
                after = page["next"]?.intValue
            }
            #expect(newer == (41..<more).map { "m\($0)" })
        }
    }

    @Test("campers and reservations page in the order given (C2 before C10), each once, also filtered", arguments: Backend.allCases)
    func campgroundLists(_ backend: Backend) async throws {
        try await withDomain(backend) { f in
            for n in 1...12 { _ = try await f.backend.campground(.addCamper(fullName: "P\(n)", phoneNumber: "555")) }
            _ = try await f.backend.campground(.addSite(number: 1, electricity: true, water: true))
            _ = try await f.backend.campground(.addSite(number: 2, electricity: true, water: true))
            let july = try #require(CivilDate("2026-07-01"))
            for n in 1...12 {
                _ = try await f.backend.campground(.reserve(site: n % 2 + 1, camperId: "C\(n)", date: july.adding(days: 10 * n), nights: 2))
            }
            let runner = try await f.runner()
            func pages(_ name: String, _ extra: [String: String], limit: Int) async throws -> [String] {
                var ids: [String] = []
                var cursor: String?
                repeat {
                    var parameters = extra.merging(["limit": String(limit)]) { $1 }
                    if let cursor { parameters["after"] = cursor }
                    let page = try await runner.query(name, parameters: QueryParameters(parameters))
                    ids += page["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
                    cursor = page["next"]?.stringValue
                } while cursor != nil
                return ids
            }
            #expect(try await pages("campers", [:], limit: 5) == (1...12).map { "C\($0)" })
            #expect(try await runner.query("campers").arrayValue?.compactMap { $0["id"]?.stringValue } == (1...12).map { "C\($0)" })
            #expect(try await pages("reservations", [:], limit: 4) == (1...12).map { "R\($0)" })
            #expect(try await pages("reservations", ["site": "1"], limit: 4) == (1...12).filter { $0 % 2 == 0 }.map { "R\($0)" })
            #expect(try await runner.query("reservations").arrayValue?.count == 12)
        }
    }
}
