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

    /// Reads and hands each message to `send`, in order.
    ///
    /// A batch of ``batchSize`` events is gathered from reads of a few events at a time
    /// (``BatchSizer``: as many as keep a read near the message budget), each event encoded in
    /// place as it is read, and its messages are sent as soon as they fill the budget: a reader
    /// whose client is slow holds about one read's worth of messages, whatever their size.
    func run(on store: any LogReading, limits: GRPCLimits, send: (_ response: EncodedResponse) async throws -> Void) async throws {
        if limit == 0 { return }
        var sizer = limits.batchSizer(upTo: batchSize)
        var remaining = limit.map(Int.init) ?? .max
        var sentAny = false
        var capturedHead: UInt64?
        var cursor = Cursor(start: start, backwards: backwards)
        // The current batch: its messages not sent yet, how many events it has had, and the
        // position of its last event.
        var pending = EncodedResponses(budgetBytes: limits.responseChunkBytes)
        var inBatch = 0
        var lastPosition: UInt64 = 0
        func sendFull() async throws {
            for response in pending.takeFull() {
                try await send(response)
                sentAny = true
            }
        }
        func endBatch() async throws {
            try await sendFull()
            var last = pending.takeCurrent()
            if let head = headField(lastPosition: lastPosition, capturedHead: capturedHead ?? 0) { last.appendHead(head) }
            try await send(last)
            sentAny = true
        }
        while remaining > 0, !cursor.isDone {
            let want = min(sizer.current, remaining, batchSize - inBatch)
            let bytesBefore = pending.appendedBytes
            let (count, head) = try await cursor.next(want, query: query, store: store, through: capturedHead) { event in
                pending.append(event)
                lastPosition = event.position
            }
            if capturedHead == nil { capturedHead = head }
            sizer.observe(count: count, bytes: pending.appendedBytes &- bytesBefore)
            try await sendFull()
            inBatch += count
            remaining -= count
            if inBatch == batchSize {
                try await endBatch()
                inBatch = 0
            }
            if count < want { break }
        }
        // The last batch, short: it ended the read (nothing more, the head, or the limit).
        if inBatch > 0 { try await endBatch() }
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

        /// Hands up to `want` events to `body`, never past `through` (the head the first batch
        /// saw); returns how many, and the head of the log when this batch was read.
        mutating func next(
            _ want: Int, query: EventQuery, store: any LogReading, through: UInt64?, _ body: (EventView) throws -> Void
        ) async throws -> (count: Int, head: UInt64) {
            if !backwards {
                var count = 0
                var last = position
                var beyond = false
                // The first batch's events are all within its own head; later ones stop at it.
                let head = try await store.forEachEvent(matching: query, after: position, limit: want) { event in
                    guard !beyond, event.position <= through ?? .max else {
                        beyond = true
                        return
                    }
                    try body(event)
                    count += 1
                    last = event.position
                }
                position = last
                if beyond || count < want || position >= (through ?? head) { isDone = true }
                return (count, head)
            }
            // Backwards: one seek per event from the top (each a snapshot of its own, never past
            // the head the read began with).
            let head = try await through.asyncOr { try await store.headPosition() }
            var top = min(position, head)
            var count = 0
            while count < want, top > 0, let event = try await store.lastEvent(matching: query, through: top) {
                try EventView.withView(of: event, body)
                count += 1
                top = event.position - 1
            }
            position = top
            if top == 0 || count < want { isDone = true }
            return (count, head)
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
