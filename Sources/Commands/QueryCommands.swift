import EventStoreCore

extension CommandHandler {
    /// Runs `command` with a ``QueryDecider``: reads every event its ``QueryDecider/query(for:)``
    /// matches (a page at a time) and the last one its ``QueryDecider/latestQuery(for:)``
    /// matches, folds them in position order, decides, and appends the decided events (tagged by
    /// ``QueryDecider/tags(for:in:)``, to the streams ``QueryDecider/stream(for:)`` names) on the
    /// condition that no event matching either query was recorded after the head the read saw.
    /// When one was, the command is read and decided again, as for a version conflict, up to
    /// ``Configuration/maximumAttempts`` times.
    ///
    /// Throws what `decide` throws, unchanged; ``CommandError`` with ``CommandError/Code/conflict``
    /// when every attempt met a matching event (``CommandError/underlying`` the last condition
    /// failure), or ``CommandError/Code/unencodable``; and the store's errors.
    public func handle<D: QueryDecider>(_ command: D.Command, with decider: D) async throws -> CommandOutcome<D> {
        let query = decider.query(for: command)
        let latest = decider.latestQuery(for: command)
        let guarded = EventQuery(query.items + (latest?.items ?? []))
        do {
            try guarded.validate()
        } catch {
            throw EventStoreError(.invalidInput, "The decider's queries, together, are not a query the store takes: \(error.message)")
        }
        var lastConflict: EventStoreError?
        var wait = configuration.backoff
        for attempt in 1...configuration.maximumAttempts {
            if attempt > 1 {
                logger.debug("retrying a command after its condition failed", metadata: [LogKeys.attempt: "\(attempt)"])
                try await configuration.clock.sleep(for: wait)
                wait *= 2
            }
            let loaded = try await load(query, latest: latest)
            var state = decider.initialState
            var passedOver: [PassedOverEvent] = []
            for recorded in loaded.events {
                do {
                    decider.evolve(&state, with: try D.Event(recorded: recorded))
                } catch {
                    passedOver.append(PassedOverEvent(recorded, reason: error.reason))
                }
            }
            let events = try decider.decide(command, state: state)
            for event in events { decider.evolve(&state, with: event) }
            guard !events.isEmpty else {
                return CommandOutcome(state: state, events: [], recorded: [], passedOver: passedOver, attempts: attempt)
            }
            var appends: [StreamAppend] = []
            for event in events {
                let newEvent = try Self.encoded(event, tags: decider.tags(for: event, in: state))
                let stream = decider.stream(for: event)
                if let last = appends.indices.last, appends[last].stream == stream {
                    appends[last].events.append(newEvent)
                } else {
                    appends.append(StreamAppend(stream: stream, events: [newEvent]))
                }
            }
            // As for stream deciders: an event written in a version the store's upcasters do not
            // bring older ones to would meet readers in a shape the code does not write.
            for event in appends.flatMap(\.events) where !upcasting.isEmpty || event.schemaVersion > 1 {
                try upcasting.check(reaching: [event.type: event.schemaVersion])
            }
            do {
                let results = try await store.append(appends, condition: AppendCondition(failIfEventsMatch: guarded, after: loaded.head))
                let recorded = zip(results, appends).flatMap { result, part in result.recordedEvents(part.events) }
                return CommandOutcome(state: state, events: events, recorded: recorded, passedOver: passedOver, attempts: attempt)
            } catch let error as EventStoreError where error.code == .conditionFailed {
                lastConflict = error
            }
        }
        throw CommandError(
            .conflict,
            "Other writers kept recording events this command depends on during \(configuration.maximumAttempts) attempts; try again.",
            attempts: configuration.maximumAttempts, underlying: lastConflict)
    }

    /// Every event `query` matches and the last one `latest` matches, in position order, and
    /// the head of the last read: every matching event up to it was read, since positions follow
    /// commit order.
    private func load(_ query: EventQuery, latest: EventQuery?) async throws -> (events: [RecordedEvent], head: UInt64) {
        let pageSize = 1_000
        var events: [RecordedEvent] = []
        var after: UInt64 = 0
        var head: UInt64 = 0
        while true {
            let page = try await store.read(query, after: after, limit: pageSize)
            events += page.events
            head = page.head
            guard page.events.count == pageSize, let last = page.events.last else { break }
            after = last.position
        }
        if let latest, let last = try await store.lastEvent(matching: latest, through: head),
            !events.contains(where: { $0.position == last.position })
        {
            events.append(last)
            events.sort { $0.position < $1.position }
        }
        return (events, head)
    }
}
