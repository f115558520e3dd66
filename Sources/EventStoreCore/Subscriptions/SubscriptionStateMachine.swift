/// The catch-up and live logic of one subscription, with no I/O and no threads: it says what to
/// do next (deliver a buffered event, read a page, report being caught up, wait for the head to
/// move) and is told what happened. Tests drive it directly.
///
/// Positions are gapless and a page read sees a consistent snapshot, so reading from
/// `nextPosition` and moving it past the last position examined gives every event once, in
/// order, whether it was committed before or after the subscription started.
package struct SubscriptionStateMachine: Sendable {
    package enum Action: Equatable, Sendable {
        /// Hand this event to the consumer.
        case deliver(RecordedEvent)
        /// Read the next page of the log, starting at this position.
        case read(from: UInt64)
        /// Everything up to this position has been delivered (only when progress is wanted).
        case reportCaughtUp(through: UInt64)
        /// Wait until the head moves past this position.
        case waitForHead(after: UInt64)
        /// The subscription is over.
        case finish
    }

    /// The next position to examine.
    private(set) var nextPosition: UInt64
    private var buffer: [RecordedEvent] = []
    private var bufferIndex = 0
    private let reportsProgress: Bool
    private var lastReported: UInt64?
    /// The head known when the last read was asked for.
    private var headAtRead: UInt64 = 0
    /// Set when a read found nothing at `nextPosition` although the known head promised it (a
    /// head from another process, ahead of this snapshot): the head it was asked at, so the next
    /// read waits for a newer one instead of spinning.
    private var emptyReadAtHead: UInt64?
    private var isFinished = false

    /// Starts examining the log at `firstPosition` (at least 1).
    package init(firstPosition: UInt64, reportsProgress: Bool) {
        nextPosition = max(firstPosition, 1)
        self.reportsProgress = reportsProgress
    }

    /// Events read but not yet delivered: at most one page, however far the log runs ahead.
    package var bufferedCount: Int { buffer.count - bufferIndex }

    /// What to do now, given the newest head known.
    package mutating func nextAction(knownHead: UInt64) -> Action {
        if isFinished { return .finish }
        if bufferIndex < buffer.count {
            let event = buffer[bufferIndex]
            bufferIndex += 1
            if bufferIndex == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                bufferIndex = 0
            }
            return .deliver(event)
        }
        if nextPosition <= knownHead && knownHead > (emptyReadAtHead ?? 0) {
            headAtRead = knownHead
            return .read(from: nextPosition)
        }
        let through = nextPosition - 1
        if reportsProgress && lastReported != through {
            lastReported = through
            return .reportCaughtUp(through: through)
        }
        return .waitForHead(after: max(through, emptyReadAtHead ?? 0))
    }

    /// A page was read: `events` (those passing the filter, in order) and the last position
    /// examined (`scannedThrough`), which is below the page's start when the log ended first.
    package mutating func pageRead(_ events: [RecordedEvent], scannedThrough: UInt64) {
        if scannedThrough >= nextPosition {
            nextPosition = scannedThrough + 1
            emptyReadAtHead = nil
        } else {
            emptyReadAtHead = headAtRead
        }
        buffer.append(contentsOf: events)
    }

    /// Ends the subscription: every later action is `.finish`.
    package mutating func finish() {
        isFinished = true
        buffer.removeAll()
        bufferIndex = 0
    }
}
