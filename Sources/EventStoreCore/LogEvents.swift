/// A range of the log as an `AsyncSequence`, read lazily a page at a time: each page is one
/// short read snapshot, and nothing is held between pages, so a range of any size costs one page
/// of memory and never keeps the writer from reusing pages. Made by
/// `EventStore.events(from:through:filter:pageSize:)` (or the same method of any ``EventLog``).
///
/// ```swift
/// for try await event in store.events(filter: EventFilter(category: "order")) {
///     print(event.position, event.type)
/// }
/// ```
///
/// The range ends at `through`, or at the head as it is when iteration starts; events committed
/// later are not part of it (`EventStore.subscribe(from:filter:)` follows the log on).
public struct LogEvents: AsyncSequence, Sendable {
    public typealias Element = RecordedEvent

    /// Reads one page: from, through, limit; returns the events and the last position examined.
    package typealias PageReader = @Sendable (UInt64, UInt64, Int) async throws -> (events: [RecordedEvent], scannedThrough: UInt64)

    let first: UInt64
    let last: UInt64
    let pageSize: Int
    let head: @Sendable () async throws -> UInt64
    let readPage: PageReader

    /// A range read with a backend's `head` and `readPage`.
    package init(
        first: UInt64, last: UInt64, pageSize: Int, head: @escaping @Sendable () async throws -> UInt64,
        readPage: @escaping PageReader
    ) {
        self.first = first
        self.last = last
        self.pageSize = Swift.max(1, pageSize)
        self.head = head
        self.readPage = readPage
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(range: self, next: Swift.max(first, 1))
    }

    /// Reads the next page when the one in hand is used up. Throws the store's errors (a damaged
    /// record, a closed store) and `CancellationError` when the task is cancelled between pages.
    public struct Iterator: AsyncIteratorProtocol {
        let range: LogEvents
        var next: UInt64
        var last: UInt64?
        var page: [RecordedEvent] = []
        var index = 0
        var finished = false

        init(range: LogEvents, next: UInt64) {
            self.range = range
            self.next = next
        }

        public mutating func next() async throws -> RecordedEvent? {
            while index == page.count {
                guard !finished else { return nil }
                try Task.checkCancellation()
                let last: UInt64
                if let known = self.last { last = known } else { last = Swift.min(range.last, try await range.head()) }
                self.last = last
                guard next <= last else {
                    finished = true
                    return nil
                }
                let (events, scannedThrough) = try await range.readPage(next, last, range.pageSize)
                page = events
                index = 0
                if scannedThrough >= last || scannedThrough < next { finished = true }
                next = scannedThrough &+ 1
            }
            defer { index += 1 }
            return page[index]
        }
    }
}
