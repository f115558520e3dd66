import Commands
import EventStore
import EventStoreTesting
import Foundation
import Testing

/// The generic handler: load the decider's streams, decide, append with the versions read, and
/// retry when another writer got in between.
@Suite("Command handler")
struct CommandHandlerTests {
    let pen = TodoEvent.added(ItemAdded(item: "pen"))

    func handler(_ store: EventStore, attempts: Int = 5, clock: any Clock<Duration> = ContinuousClock()) -> CommandHandler {
        CommandHandler(store: store, configuration: CommandHandler.Configuration(maximumAttempts: attempts, backoff: .milliseconds(10), clock: clock))
    }

    @Test("a command's events are appended and returned as recorded, with no read-back")
    func recordsEvents() async throws {
        try await TemporaryStore.with { store in
            // Given an empty list; when "pen" is added
            let outcome = try await handler(store).handle(.add("pen"), with: TodoDecider(list: "home"))
            // Then one event is recorded at position 1, version 1, and the state has it
            #expect(outcome.events == [pen])
            #expect(outcome.recorded.map(\.position) == [1])
            #expect(outcome.recorded.map(\.version) == [1])
            #expect(outcome.recorded.map(\.stream) == ["todo-home"])
            #expect(outcome.recorded.map(\.id) == [SequentialIDs.id(1)])
            #expect(outcome.recorded == (try store.read(limit: .max)))
            #expect(outcome.state == TodoState(open: ["pen"], done: []))
            #expect(outcome.passedOver.isEmpty)
            #expect(outcome.attempts == 1)
        }
    }

    @Test("the state is folded from the stream, and state(of:) reads it without deciding")
    func foldsTheStream() async throws {
        try await TemporaryStore.with { store in
            let handler = handler(store)
            let decider = TodoDecider(list: "home")
            _ = try await handler.handle(.add("pen"), with: decider)
            _ = try await handler.handle(.add("ink"), with: decider)
            let outcome = try await handler.handle(.complete("pen"), with: decider)
            #expect(outcome.state == TodoState(open: ["ink"], done: ["pen"]))
            #expect(try await handler.state(of: decider).state == outcome.state)
            #expect(try await handler.state(of: TodoDecider(list: "work")).state == TodoState())
            #expect(try store.headPosition() == 3)
        }
    }

    @Test("a refusal is thrown unchanged and nothing is written")
    func refusal() async throws {
        try await TemporaryStore.with { store in
            let handler = handler(store)
            _ = try await handler.handle(.add("pen"), with: TodoDecider(list: "home"))
            await #expect(throws: TodoRefused(reason: "pen is already on the list")) {
                try await handler.handle(.add("pen"), with: TodoDecider(list: "home"))
            }
            await #expect(throws: TodoRefused(reason: "ink is not on the list")) {
                try await handler.handle(.complete("ink"), with: TodoDecider(list: "home"))
            }
            #expect(try store.headPosition() == 1)
        }
    }

    @Test("a command with nothing to do writes nothing and returns the loaded state")
    func nothingToDo() async throws {
        try await TemporaryStore.with { store in
            let handler = handler(store)
            _ = try await handler.handle(.add("pen"), with: TodoDecider(list: "home"))
            let outcome = try await handler.handle(.nothing, with: TodoDecider(list: "home"))
            #expect(outcome.events.isEmpty)
            #expect(outcome.recorded.isEmpty)
            #expect(outcome.state == TodoState(open: ["pen"], done: []))
            #expect(try store.headPosition() == 1)
        }
    }

    @Test("an event that cannot be encoded is refused as unencodable and nothing is written")
    func unencodable() async throws {
        try await TemporaryStore.with { store in
            do {
                _ = try await handler(store).handle(.measure(.infinity), with: TodoDecider(list: "home"))
                Issue.record("An infinite measure was recorded")
            } catch let error as CommandError {
                #expect(error.code == .unencodable)
                #expect(error.message.hasSuffix("nothing was written."))
            }
            #expect(try store.headPosition() == 0)
        }
    }

    @Test("events for two streams commit in one append, each loaded stream guarded by the version read")
    func twoStreams() async throws {
        try await TemporaryStore.with { store in
            let handler = handler(store)
            let decider = TodoDecider(list: "home", archives: true)
            _ = try await handler.handle(.add("pen"), with: decider)
            let outcome = try await handler.handle(.complete("pen"), with: decider)
            #expect(outcome.recorded.map(\.stream) == ["todo-home", "archive-home"])
            #expect(outcome.recorded.map(\.position) == [2, 3])
            #expect(outcome.recorded.map(\.version) == [2, 1])
            #expect(try store.streamVersion("archive-home") == 1)
            #expect(outcome.state == TodoState(open: [], done: ["pen"]))
        }
    }

    @Test("events the decider cannot read are passed over, reported, and the command still decides")
    func passesOver() async throws {
        try await TemporaryStore.with { store in
            // Given a hand-appended event of a known type with bad data, and one of an unknown type
            _ = try await store.append(to: "todo-home", events: [
                NewEvent(type: "ItemAdded", data: Data(#"{"name":"pen"}"#.utf8)),
                NewEvent(type: "Mystery", data: Data("{}".utf8)),
            ])
            // When an item is added
            let outcome = try await handler(store).handle(.add("ink"), with: TodoDecider(list: "home"))
            // Then both are reported and the event is appended after them (guarded by version 2)
            #expect(outcome.passedOver.map(\.position) == [1, 2])
            #expect(outcome.passedOver.map(\.type) == ["ItemAdded", "Mystery"])
            #expect(outcome.passedOver[0].reason.hasPrefix("its data is not a ItemAdded"))
            #expect(outcome.passedOver[1].reason == "Mystery is not a todo event")
            #expect(outcome.recorded.map(\.version) == [3])
            #expect(outcome.state == TodoState(open: ["ink"], done: []))
        }
    }

    @Test("another writer in between: with one attempt the command fails as a conflict and writes nothing")
    func conflictWithoutRetry() async throws {
        try await TemporaryStore.with { store in
            let interloper = Interloper(store: store, stream: "todo-home", atDecisions: [1])
            do {
                _ = try await handler(store, attempts: 1).handle(.add("pen"), with: TodoDecider(list: "home", interloper: interloper))
                Issue.record("The command succeeded although its stream changed after it was read")
            } catch let error as CommandError {
                #expect(error.code == .conflict)
                #expect(error.attempts == 1)
                #expect(error.underlying?.code == .versionConflict)
                #expect(error.message == "Other writers kept changing 'todo-home' during 1 attempts; try again.")
            }
            // Only the other writer's event is in the log.
            #expect(try store.read(limit: .max).map(\.type) == ["ItemAdded"])
            #expect(try store.read(limit: .max).map(\.data) == [Data(#"{"item":"other-1"}"#.utf8)])
        }
    }

    @Test("another writer in between: the command waits the backoff on the clock, decides again on the new state, and records")
    func conflictRetried() async throws {
        try await TemporaryStore.with { store in
            let clock = TestClock()
            let interloper = Interloper(store: store, stream: "todo-home", atDecisions: [1, 2])
            let handler = handler(store, attempts: 3, clock: clock)
            let command = Task {
                try await handler.handle(.add("pen"), with: TodoDecider(list: "home", interloper: interloper))
            }
            // The first retry waits 10 ms, the second 20 ms: nothing happens until the clock moves.
            try await clock.waitForSleepers(1)
            #expect(interloper.decisionCount == 1)
            clock.advance(by: .milliseconds(9))
            #expect(clock.sleeperCount == 1)
            clock.advance(by: .milliseconds(1))
            try await clock.waitForSleepers(1)
            #expect(interloper.decisionCount == 2)
            clock.advance(by: .milliseconds(20))
            let outcome = try await withTimeout(.seconds(30), "the third attempt's outcome") { try await command.value }
            #expect(outcome.attempts == 3)
            #expect(interloper.decisionCount == 3)
            #expect(outcome.state == TodoState(open: ["other-1", "other-2", "pen"], done: []))
            #expect(outcome.recorded.map(\.version) == [3])
        }
    }
}
