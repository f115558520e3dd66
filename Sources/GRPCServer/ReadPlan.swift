import EventStoreCore

/// One DCB Read: the events that match a query from a start, forwards or backwards, up to a
/// limit, in batches, each batch from one snapshot of the log, with the `head` UmaDB sends.
///
/// `head`, as UmaDB 0.7.8 sends it: without a limit, the head of the log when the first batch
/// was read, in every message (and events committed after it are not sent); with a limit, the
/// position of the last event of the message (the lowest when backwards), absent when nothing
/// matched. An empty store, or nothing to send, gives one message without events (its head as
/// above); a limit of 0 gives no message at all. A batch too big for one message goes out in
/// several, the head on the last only.
struct ReadPlan: Sendable {
    let query: EventQuery
    /// The first position to read (inclusive; backwards, the last); nil: the start (or end).
    let start: UInt64?
    let backwards: Bool
    let limit: UInt32?
    /// Events per batch at most (each one read from its own snapshot); fewer while the events are
    /// big (``BatchSizer``).
    let batchSize: Int

    /// Reads and hands each message's events and head to `send`, in order.
    ///
    /// A batch of ``batchSize`` events is gathered from reads of a few events at a time
    /// (``BatchSizer``: as many as keep a read near the message budget), and its messages are
    /// sent as soon as they fill the budget: a reader whose client is slow holds about one
    /// message of events, whatever their size.
    func run(on store: any LogReading, limits: GRPCLimits, send: (_ response: EncodedResponse) async throws -> Void) async throws {
        if limit == 0 { return }
        var sizer = limits.batchSizer(upTo: batchSize)
        var remaining = limit.map(Int.init) ?? .max
        var sentAny = false
        var capturedHead: UInt64?
        var cursor = Cursor(start: start, backwards: backwards)
        // The current batch: its events not sent yet (a message's worth at most), how many it
        // has had, and the position of its last event.
        var pending = EncodedResponse()
        var inBatch = 0
        var lastPosition: UInt64 = 0
        func flush(endOfBatch: Bool) async throws {
            guard !pending.isEmpty || endOfBatch else { return }
            if endOfBatch, let head = headField(lastPosition: lastPosition, capturedHead: capturedHead ?? 0) { pending.appendHead(head) }
            try await send(pending)
            pending = EncodedResponse()
            sentAny = true
        }
        while remaining > 0, !cursor.isDone {
            let want = min(sizer.current, remaining, batchSize - inBatch)
            let (events, head) = try await cursor.next(want, query: query, store: store, through: capturedHead)
            if capturedHead == nil { capturedHead = head }
            sizer.observe(events)
            for event in events {
                if !pending.isEmpty && pending.estimatedBytes + EncodedResponse.estimatedSize(of: event) > limits.responseChunkBytes {
                    try await flush(endOfBatch: false)
                }
                pending.append(event)
                lastPosition = event.position
            }
            inBatch += events.count
            remaining -= events.count
            if inBatch == batchSize {
                try await flush(endOfBatch: true)
                inBatch = 0
            }
            if events.count < want { break }
        }
        // The last batch, short: it ended the read (nothing more, the head, or the limit).
        if inBatch > 0 { try await flush(endOfBatch: true) }
        if !sentAny {
            let head = try await capturedHead.asyncOr { try await store.headPosition() }
            var empty = EncodedResponse()
            if limit == nil && head > 0 { empty.appendHead(head) }
            try await send(empty)
        }
    }

    /// The head of the message that ends a batch whose last event is at `lastPosition`.
    private func headField(lastPosition: UInt64, capturedHead: UInt64) -> UInt64? {
        guard limit != nil else { return capturedHead > 0 ? capturedHead : nil }
        return lastPosition
    }

    /// Where the read stands: the next position to read from, either way.
    private struct Cursor {
        /// Forwards: the position read up to (exclusive start of the next batch).
        /// Backwards: the position to read down from (inclusive).
        var position: UInt64
        let backwards: Bool
        var isDone = false

        init(start: UInt64?, backwards: Bool) {
            self.backwards = backwards
            if backwards {
                // UmaDB: no start is the end; start 0 is before the first event.
                position = start ?? .max
                isDone = start == 0
            } else {
                // Start is inclusive, and 0 is the start: read after start - 1.
                position = (start ?? 0) > 0 ? (start ?? 1) - 1 : 0
            }
        }

        /// Up to `want` events, and the head of the log when this batch was read; never past
        /// `through` (the head the first batch saw).
        mutating func next(_ want: Int, query: EventQuery, store: any LogReading, through: UInt64?) async throws
            -> ([RecordedEvent], UInt64)
        {
            if !backwards {
                let found = try await store.read(query, after: position, limit: want)
                let cap = through ?? found.head
                let events = found.events.prefix { $0.position <= cap }
                if let last = events.last { position = last.position }
                if events.count < found.events.count || position >= cap { isDone = true }
                return (Array(events), found.head)
            }
            // Backwards: one seek per event from the top (each a snapshot of its own, never past
            // the head the read began with).
            let head = try await through.asyncOr { try await store.headPosition() }
            var top = min(position, head)
            var events: [RecordedEvent] = []
            while events.count < want, top > 0, let event = try await store.lastEvent(matching: query, through: top) {
                events.append(event)
                top = event.position - 1
            }
            position = top
            if top == 0 || events.count < want { isDone = true }
            return (events, head)
        }
    }
}

extension Optional where Wrapped == UInt64 {
    /// The value, or `fallback`'s when nil.
    fileprivate func asyncOr(_ fallback: () async throws -> UInt64) async throws -> UInt64 {
        if let self { return self }
        return try await fallback()
    }
}
