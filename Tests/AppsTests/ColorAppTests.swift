import Apps
import Commands
import EventStore
import Foundation
import Projections
import Testing
import TestSupport

/// The color calculator through the backend, the projection, history and a subscription.
@Suite("Color calculator")
struct ColorAppTests {
    @Test("a calculator never touched answers the starting state; presses and settings move it")
    func projection() async throws {
        let f = try DomainFixture()
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
        let live = try runner.storedHash(of: "color")
        #expect(try await runner.rebuild(["color"]).map(\.hash) == [live])
    }

    @Test("a key press reaches a subscriber, and the projection shows it as soon as it is awaited (no sleeps)")
    func subscription() async throws {
        let f = try DomainFixture()
        let runner = try await f.runner()
        let presses = EventCollector(f.store.subscribe(from: .start, filter: EventFilter(stream: AppStreams.color("c"))).withProgress)
        _ = try await f.backend.color(.press("clear"), calculator: "c")
        _ = try await f.backend.color(.press("a"), calculator: "c")
        let received = try await presses.take(2)
        #expect(received.map(\.type) == ["KeyPressed", "KeyPressed"])
        #expect(try await runner.query("color", parameters: ["calculator": "c"], asOf: received[1].position)["hexText"] == "#A")
        #expect(try await runner.query("color", parameters: ["calculator": "c"])["hexText"] == "#A")
        try await presses.expectNothingMore(through: try f.store.headPosition())
    }

    @Test("a hand-appended event the calculator cannot read is passed over by the decider and the projection")
    func poison() async throws {
        let f = try DomainFixture()
        _ = try await f.store.append(to: AppStreams.color("c"), events: [NewEvent(type: "KeyPressed", data: Data(#"{"key":"Z"}"#.utf8))])
        let outcome = try await f.backend.color(.press("clear"), calculator: "c")
        #expect(outcome.passedOver.map(\.position) == [1])
        let runner = try await f.runner()
        #expect(try await runner.query("color", parameters: ["calculator": "c"])["hexText"] == "#")
        #expect(try runner.statuses().first { $0.name == "color" }?.eventsSkipped == 1)
    }
}
