@testable import EventStoreCore
@testable import EventStoreLMDB
import Foundation
import Testing
import TestSupport

/// The catch-up/live logic, driven by hand: no store, no threads, no time.
@Suite("Subscription state machine")
struct SubscriptionStateMachineTests {
    func recorded(_ position: UInt64) -> RecordedEvent {
        RecordedEvent(
            position: position, stream: "s", version: position, id: SequentialIDs.id(position), type: "T", data: Data(), metadata: Data(),
            recordedAtMicroseconds: 0)
    }

    @Test("catch-up reads pages until the head, delivers in order, then waits for the head to move")
    func catchUpThenLive() {
        var machine = SubscriptionStateMachine(firstPosition: 1, reportsProgress: false)
        let (e1, e2, e3, e4) = (recorded(1), recorded(2), recorded(3), recorded(4))
        // Given a log at head 3
        #expect(machine.nextAction(knownHead: 3) == .read(from: 1))
        machine.pageRead([e1, e2], scannedThrough: 2)  // a page limit stopped the read at 2
        #expect(machine.nextAction(knownHead: 3) == .deliver(e1))
        #expect(machine.nextAction(knownHead: 3) == .deliver(e2))
        #expect(machine.nextAction(knownHead: 3) == .read(from: 3))
        machine.pageRead([e3], scannedThrough: 3)
        #expect(machine.nextAction(knownHead: 3) == .deliver(e3))
        // When caught up, it waits past the last position examined
        #expect(machine.nextAction(knownHead: 3) == .waitForHead(after: 3))
        // Then a new head means a new read, from exactly the next position
        #expect(machine.nextAction(knownHead: 4) == .read(from: 4))
        machine.pageRead([e4], scannedThrough: 4)
        #expect(machine.nextAction(knownHead: 4) == .deliver(e4))
        #expect(machine.nextAction(knownHead: 4) == .waitForHead(after: 4))
        #expect(machine.nextPosition == 5)
    }

    @Test("events filtered out still move the position, so nothing is read twice")
    func filteredPagesAdvance() {
        var machine = SubscriptionStateMachine(firstPosition: 1, reportsProgress: false)
        #expect(machine.nextAction(knownHead: 10_000) == .read(from: 1))
        machine.pageRead([], scannedThrough: 4096)  // the scan limit stopped the read
        #expect(machine.nextAction(knownHead: 10_000) == .read(from: 4097))
        let found = recorded(9000)
        machine.pageRead([found], scannedThrough: 10_000)
        #expect(machine.nextPosition == 10_001)
        #expect(machine.nextAction(knownHead: 10_000) == .deliver(found))
        #expect(machine.nextAction(knownHead: 10_000) == .waitForHead(after: 10_000))
    }

    @Test("with progress, it reports each catch-up once before waiting")
    func reportsProgress() {
        var machine = SubscriptionStateMachine(firstPosition: 5, reportsProgress: true)
        // An empty log: caught up through 4 (nothing before the start position is examined)
        #expect(machine.nextAction(knownHead: 0) == .reportCaughtUp(through: 4))
        #expect(machine.nextAction(knownHead: 0) == .waitForHead(after: 4))
        #expect(machine.nextAction(knownHead: 0) == .waitForHead(after: 4))
        #expect(machine.nextAction(knownHead: 6) == .read(from: 5))
        machine.pageRead([], scannedThrough: 6)
        #expect(machine.nextAction(knownHead: 6) == .reportCaughtUp(through: 6))
        #expect(machine.nextAction(knownHead: 6) == .waitForHead(after: 6))
    }

    @Test("a read that finds nothing where the head promised waits for a newer head instead of spinning")
    func emptyReadDoesNotSpin() {
        var machine = SubscriptionStateMachine(firstPosition: 3, reportsProgress: false)
        #expect(machine.nextAction(knownHead: 3) == .read(from: 3))
        machine.pageRead([], scannedThrough: 2)  // the snapshot ended at 2
        #expect(machine.nextAction(knownHead: 3) == .waitForHead(after: 3))
        #expect(machine.nextAction(knownHead: 4) == .read(from: 3))
        machine.pageRead([recorded(3), recorded(4)], scannedThrough: 4)
        #expect(machine.nextAction(knownHead: 4) == .deliver(recorded(3)))
    }

    @Test("finishing drops the buffer and ends every later step")
    func finishing() {
        var machine = SubscriptionStateMachine(firstPosition: 1, reportsProgress: false)
        _ = machine.nextAction(knownHead: 2)
        machine.pageRead([recorded(1), recorded(2)], scannedThrough: 2)
        #expect(machine.bufferedCount == 2)
        machine.finish()
        #expect(machine.bufferedCount == 0)
        #expect(machine.nextAction(knownHead: 9) == .finish)
    }

    @Test("the buffer holds one page at most, however far the head runs ahead")
    func bufferIsOnePage() {
        var machine = SubscriptionStateMachine(firstPosition: 1, reportsProgress: false)
        var maximum = 0
        var delivered: [UInt64] = []
        while delivered.count < 1000 {
            switch machine.nextAction(knownHead: 1_000_000) {
            case let .read(from: position):
                let page = (position..<(position + 100)).map(recorded)
                machine.pageRead(page, scannedThrough: position + 99)
                maximum = max(maximum, machine.bufferedCount)
            case let .deliver(event):
                delivered.append(event.position)
            default:
                Issue.record("unexpected action")
                return
            }
        }
        #expect(maximum == 100)
        #expect(delivered == Array(1...1000))
    }
}
