import Synchronization
/// Where a subscription starts.
public enum SubscriptionStart: Sendable, Equatable {
    /// From the first event of the log.
    case start
    /// From this position (inclusive).
    case position(UInt64)
    /// After the head at the moment of subscribing: only events committed later.
    case end
}

/// What a subscription with progress hands out: an event, or word that everything up to a
/// position has been delivered and the subscription now waits for new commits.
public enum SubscriptionMessage: Sendable, Equatable {
    /// The next event that passes the filter.
    case event(RecordedEvent)
    /// Every event up to and including this position has been examined (and delivered when it
    /// passed the filter); sent each time the subscription catches up with the head.
    case caughtUp(through: UInt64)
}

/// An asynchronous sequence of recorded events, in position order, from a start position and
/// through a filter: first the events already in the log (catch-up), then each new one as it is
/// committed (live), with no gap and no duplicate between the two.
///
/// Pull-based: each `next()` reads the next page from the store only when the buffer is empty, so
/// a slow consumer costs at most one page of memory: 256 events, and no more stored bytes than
/// ``StoreConfiguration/subscriptionPageBytes`` (or one event, when a single event is larger). It waits when caught up: for commits of this
/// process, until the writer signals; for commits of other processes, until the poller notices
/// (see ``StoreConfiguration/pollInterval``). Cancelling the consuming task ends the sequence (next
/// returns nil); closing the store ends it with ``EventStoreError/Code/closed``.
public struct Subscription: AsyncSequence, Sendable {
    public typealias Element = RecordedEvent

    let source: any SubscriptionSource
    let firstPosition: UInt64
    let filter: EventFilter

    /// A subscription that reads `source` from `firstPosition` (a backend's `subscribe`).
    package init(source: any SubscriptionSource, firstPosition: UInt64, filter: EventFilter) {
        self.source = source
        self.firstPosition = firstPosition
        self.filter = filter
    }

    /// The same subscription, also reporting each time it has caught up (see ``SubscriptionMessage``).
    public var withProgress: ProgressSubscription {
        ProgressSubscription(source: source, firstPosition: firstPosition, filter: filter)
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(core: SubscriptionCore(source: source, firstPosition: firstPosition, filter: filter, reportsProgress: false))
    }

    /// Hands out the subscription's events.
    public struct Iterator: AsyncIteratorProtocol {
        var core: SubscriptionCore

        public mutating func next() async throws -> RecordedEvent? {
            while let message = try await core.next() {
                if case let .event(event) = message { return event }
            }
            return nil
        }
    }
}

/// A ``Subscription`` that also says when it has caught up with the head.
public struct ProgressSubscription: AsyncSequence, Sendable {
    public typealias Element = SubscriptionMessage

    let source: any SubscriptionSource
    let firstPosition: UInt64
    let filter: EventFilter

    public func makeAsyncIterator() -> Iterator {
        Iterator(core: SubscriptionCore(source: source, firstPosition: firstPosition, filter: filter, reportsProgress: true))
    }

    /// Hands out the subscription's messages.
    public struct Iterator: AsyncIteratorProtocol {
        var core: SubscriptionCore

        public mutating func next() async throws -> SubscriptionMessage? {
            try await core.next()
        }
    }
}

/// What a subscription reads: a backend's log, a page at a time, and the signal of its head.
package protocol SubscriptionSource: Sendable {
    /// The newest head this process knows of, and the subscribers waiting for it to move.
    var headSignal: HeadSignal { get }
    /// The store's configuration (its logger and the lag worth a notice).
    var configuration: StoreConfiguration { get }
    /// Where open subscriptions and their lag are counted.
    var metrics: StoreMetrics { get }
    /// Reads from `position` until `limit` events pass `filter`, or their stored bytes (data and
    /// metadata) reach `byteLimit`, or `scanLimit` positions were examined, or the visible log
    /// ends. A page holds at least one event when one matches, whatever its size, and never an
    /// event that would take it past `byteLimit` after the first. `scannedThrough` is the last
    /// position examined (`position - 1` when there was nothing), so the caller goes on after
    /// it; it never passes a position that is not yet visible.
    func readPage(from position: UInt64, limit: Int, byteLimit: Int, scanLimit: Int, filter: EventFilter) async throws
        -> (events: [RecordedEvent], scannedThrough: UInt64)
    /// The same, never examining a position after `last`: a bounded page of a range, with where
    /// to go on (the server's `GET /events`, which answers in bounded time and memory however
    /// sparse or large the matches are).
    func readPage(
        from position: UInt64, through last: UInt64, limit: Int, byteLimit: Int, scanLimit: Int, filter: EventFilter
    ) async throws -> (events: [RecordedEvent], scannedThrough: UInt64)
    /// Looks for a head committed elsewhere (another process, another host) and publishes it on
    /// ``headSignal``: called before a subscription sleeps.
    func refreshHead() async throws
}

/// Drives a ``SubscriptionStateMachine`` against the store: reads pages and waits for heads.
struct SubscriptionCore {
    /// How many matching events one page read returns at most.
    static let pageSize = 256
    /// How many records one page read examines at most, so a sparse filter never holds a read
    /// transaction long.
    static let scanLimit = 4096

    let source: any SubscriptionSource
    let filter: EventFilter
    var machine: SubscriptionStateMachine

    init(source: any SubscriptionSource, firstPosition: UInt64, filter: EventFilter, reportsProgress: Bool) {
        self.source = source
        self.filter = filter
        machine = SubscriptionStateMachine(firstPosition: firstPosition, reportsProgress: reportsProgress)
    }

    /// Whether this subscription has been logged as far behind the head (and not yet as caught up).
    var loggedAsBehind = false

    /// Logs once when the subscription falls more than the configured lag behind the head, and
    /// once when it has caught up again.
    mutating func noteLag(behind head: UInt64, at position: UInt64) {
        let lag = head > position ? head - position : 0
        source.metrics.subscriptionLag(lag)
        let configuration = source.configuration
        if !loggedAsBehind, lag > configuration.subscriptionLagNotice {
            loggedAsBehind = true
            configuration.logger.notice(
                "a subscription is far behind the head", metadata: [StoreLogKeys.position: "\(position)", StoreLogKeys.head: "\(head)"])
        } else if loggedAsBehind, lag == 0 {
            loggedAsBehind = false
            configuration.logger.notice("a subscription has caught up", metadata: [StoreLogKeys.position: "\(position)"])
        }
    }

    /// Counts this subscription as open from its first `next()` until it ends.
    var openMark: OpenSubscriptionMark?

    mutating func next() async throws -> SubscriptionMessage? {
        if openMark == nil { openMark = OpenSubscriptionMark(metrics: source.metrics) }
        do {
            let message = try await step()
            if message == nil { openMark?.close() }
            return message
        } catch {
            openMark?.close()
            throw error
        }
    }

    private mutating func step() async throws -> SubscriptionMessage? {
        while true {
            if Task.isCancelled {
                machine.finish()
                return nil
            }
            switch machine.nextAction(knownHead: source.headSignal.current) {
            case let .deliver(event):
                return .event(event)
            case let .read(from: position):
                do {
                    let page = try await source.readPage(
                        from: position, limit: Self.pageSize, byteLimit: source.configuration.subscriptionPageBytes,
                        scanLimit: Self.scanLimit, filter: filter)
                    machine.pageRead(page.events, scannedThrough: page.scannedThrough)
                    noteLag(behind: source.headSignal.current, at: page.scannedThrough)
                } catch {
                    machine.finish()
                    throw error
                }
            case let .reportCaughtUp(through: position):
                noteLag(behind: position, at: position)
                return .caughtUp(through: position)
            case let .waitForHead(after: position):
                noteLag(behind: position, at: position)
                do {
                    // Another process may have committed since the last look: check before sleeping.
                    try await source.refreshHead()
                    if source.headSignal.current > position { continue }
                    _ = try await source.headSignal.wait(after: position)
                } catch is CancellationError {
                    machine.finish()
                    return nil
                } catch {
                    machine.finish()
                    throw error
                }
            case .finish:
                return nil
            }
        }
    }
}

/// A subscription counted in ``StoreMetrics``' open subscriptions: from its first `next()` until
/// it ends, fails, or its iterator is released, whichever comes first.
final class OpenSubscriptionMark: Sendable {
    private let metrics: StoreMetrics
    private let isOpen = Atomic<Bool>(true)

    init(metrics: StoreMetrics) {
        self.metrics = metrics
        metrics.subscriptionOpened()
    }

    func close() {
        if isOpen.exchange(false, ordering: .relaxed) { metrics.subscriptionClosed() }
    }

    deinit { close() }
}
