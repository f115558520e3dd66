import EventStoreCore
import Logging

/// Runs commands against an event store with a ``StreamDecider``: load the state, decide, append
/// with the versions read, retry when other writers got in between.
///
/// ```swift
/// let handler = CommandHandler(store: store)
/// let outcome = try await handler.handle(.add(item: "pen"), with: TodoDecider(list: "home"))
/// print(outcome.recorded.map(\.position))
/// ```
public struct CommandHandler: Sendable {
    /// How the handler retries and what it logs.
    public struct Configuration: Sendable {
        /// How many times a command is decided at most when other writers keep changing its
        /// streams (at least 1).
        public var maximumAttempts: Int
        /// How long to wait before the second attempt; each later wait doubles it.
        public var backoff: Duration
        /// The clock the waits run on (inject a test clock to drive retries by hand).
        public var clock: any Clock<Duration>
        /// Where retries (debug) and passed-over events (info) are told; nil: the store's logger.
        public var logger: Logger?
        /// For a ``SnapshotDecider``: a snapshot of its state is written with the append that
        /// brings the events folded since the last one to this many (at least 1). Lower: commands
        /// read fewer events and snapshots are written more often (each one is the state's size).
        public var snapshotInterval: Int

        public init(
            maximumAttempts: Int = 5, backoff: Duration = .milliseconds(1), clock: any Clock<Duration> = ContinuousClock(),
            logger: Logger? = nil, snapshotInterval: Int = 100
        ) {
            self.maximumAttempts = max(1, maximumAttempts)
            self.backoff = backoff
            self.clock = clock
            self.logger = logger
            self.snapshotInterval = max(1, snapshotInterval)
        }
    }

    /// The store commands are run against.
    public let store: any CommandStore
    /// How the handler retries and logs.
    public let configuration: Configuration

    /// Where the handler logs: its configuration's logger, else the store's.
    let logger: Logger
    /// The store's upcasters, checked against the versions of the events decided.
    let upcasting: Upcasting
    /// The fingerprint of the store's upcasters, part of every snapshot's state version: a
    /// snapshot folded from events upcast otherwise is passed over.
    let upcasterFingerprint: UInt64

    public init(store: any CommandStore, configuration: Configuration = Configuration()) {
        self.store = store
        self.configuration = configuration
        logger = configuration.logger ?? store.configuration.logger
        // The store checked its upcasters when it opened; unchecked ones cannot reach here.
        upcasting = (try? Upcasting(store.configuration.upcasters)) ?? .none
        upcasterFingerprint = upcasting.fingerprint(consuming: nil)
    }

    /// Runs `command` with `decider`.
    ///
    /// - What is read: every event of the decider's ``StreamDecider/streams``, folded with
    ///   ``Decider/evolve(_:with:)`` in position order into the state. An event that does not
    ///   decode as the decider's events (a hand-appended one) is passed over and reported in
    ///   ``CommandOutcome/passedOver``, never an error: the decider decides by its rules on what
    ///   it can read.
    /// - ``Decider/decide(_:state:)`` runs once per attempt, so it must be pure.
    /// - What commits: every decided event, appended in one atomic append to the streams
    ///   ``StreamDecider/stream(for:)`` names, each loaded stream guarded by the version it was
    ///   read at. Nothing is written when it throws.
    /// - Conflicts: when another writer changed a loaded stream in between, the command is loaded
    ///   and decided again, up to ``Configuration/maximumAttempts`` times, waiting
    ///   ``Configuration/backoff`` (doubled each time) on the configured clock in between.
    ///
    /// Throws what `decide` throws, unchanged; ``CommandError`` with ``CommandError/Code/conflict``
    /// (the attempts and the last conflict) when every attempt met one, or
    /// ``CommandError/Code/unencodable`` when a decided event cannot be encoded; and the store's
    /// errors.
    public func handle<D: StreamDecider>(_ command: D.Command, with decider: D) async throws -> CommandOutcome<D> {
        try await run(command, decider, snapshots: nil)
    }

    /// Runs `command` with a decider whose state is kept in snapshots: as
    /// `handle(_:with:)` does, reading the decider's latest snapshot (of its
    /// version and streams) and only the events after it; and writing a new snapshot, in the
    /// same transaction as the append, when the events folded since the last one reach
    /// ``Configuration/snapshotInterval``. A snapshot that does not decode is passed over
    /// (logged); no outcome depends on snapshots, only the time a command takes.
    public func handle<D: SnapshotDecider>(_ command: D.Command, with decider: D) async throws -> CommandOutcome<D> {
        try await run(command, decider, snapshots: try await snapshotCodec(for: decider))
    }

    /// The decider's state as its streams tell it now, and the events it passed over (as
    /// `handle(_:with:)` loads it, without deciding anything).
    public func state<D: StreamDecider>(of decider: D) async throws -> (state: D.State, passedOver: [PassedOverEvent]) {
        let loaded = try await load(decider, snapshots: nil)
        return (loaded.state, loaded.passedOver)
    }

    /// The decider's state as its latest snapshot and the events after it tell it now.
    public func state<D: SnapshotDecider>(of decider: D) async throws -> (state: D.State, passedOver: [PassedOverEvent]) {
        let loaded = try await load(decider, snapshots: try await snapshotCodec(for: decider))
        return (loaded.state, loaded.passedOver)
    }

    /// The decider's snapshot codec, with the snapshot table opened (nil when its key is too long).
    private func snapshotCodec<D: SnapshotDecider>(for decider: D) async throws -> SnapshotCodec<D>? {
        guard let codec = SnapshotCodec(decider, upcasters: upcasterFingerprint) else { return nil }
        try await store.openTables([Snapshots.table])
        return codec
    }

    private func run<D: StreamDecider>(_ command: D.Command, _ decider: D, snapshots: SnapshotCodec<D>?) async throws -> CommandOutcome<D> {
        var lastConflict: EventStoreError?
        var wait = configuration.backoff
        for attempt in 1...configuration.maximumAttempts {
            if attempt > 1 {
                logger.debug(
                    "retrying a command after a version conflict",
                    metadata: [LogKeys.attempt: "\(attempt)", LogKeys.streams: "\(decider.streams.joined(separator: ","))"])
                try await configuration.clock.sleep(for: wait)
                wait *= 2
            }
            let loaded = try await load(decider, snapshots: snapshots)
            let events = try decider.decide(command, state: loaded.state)
            var state = loaded.state
            for event in events { decider.evolve(&state, with: event) }
            guard !events.isEmpty else {
                return CommandOutcome(state: state, events: [], recorded: [], passedOver: loaded.passedOver, attempts: attempt)
            }
            let (appends, newEvents) = try appends(of: events, with: decider, versions: loaded.versions, state: state)
            // An event written in a version the store's upcasters do not bring older ones to (or
            // take further) means this store's readers, this handler's next load among them,
            // would meet a shape the code does not write.
            for event in newEvents.joined() where !upcasting.isEmpty || event.schemaVersion > 1 {
                try upcasting.check(reaching: [event.type: event.schemaVersion])
            }
            do {
                let results: [AppendResult]
                if let snapshot = snapshotDue(snapshots, decider, state: state, loaded: loaded, appends: appends) {
                    // A deletion (a delete, a purge, another process's trim) that committed since the load
                    // changes no version it read, but the state may hold what it removed: no snapshot then.
                    let deletions = loaded.deletions
                    results = try await store.append(appends) { txn, _ in
                        guard try await txn.deletionFingerprint(consuming: nil) == deletions else { return }
                        try await txn.put(Snapshots.table, snapshot.key, snapshot.value)
                    }
                } else {
                    results = try await store.append(appends)
                }
                var recorded: [RecordedEvent] = []
                for (result, events) in zip(results, newEvents) {
                    // An idempotent retry recorded nothing new: what the log holds is the record.
                    if result.alreadyRecorded {
                        for position in result.positions {
                            if let event = try await store.event(at: position) { recorded.append(event) }
                        }
                    } else {
                        recorded += result.recordedEvents(events)
                    }
                }
                return CommandOutcome(state: state, events: events, recorded: recorded, passedOver: loaded.passedOver, attempts: attempt)
            } catch let error as EventStoreError where error.code == .versionConflict {
                lastConflict = error
            }
        }
        throw CommandError(
            .conflict,
            "Other writers kept changing \(decider.streams.map { "'\($0)'" }.joined(separator: " and ")) during \(configuration.maximumAttempts) attempts; try again.",
            attempts: configuration.maximumAttempts, underlying: lastConflict)
    }

    /// The snapshot to write with this append, when one is due: the events folded since the
    /// last snapshot and those appended now reach the interval, and every appended event goes
    /// to one of the decider's streams (so the state after it is what those streams tell).
    private func snapshotDue<D: StreamDecider>(
        _ snapshots: SnapshotCodec<D>?, _ decider: D, state: D.State, loaded: Loaded<D.State>, appends: [StreamAppend]
    ) -> (key: [UInt8], value: [UInt8])? {
        guard let snapshots else { return nil }
        let appended = appends.reduce(0) { $0 + $1.events.count }
        guard loaded.tail + appended >= configuration.snapshotInterval,
            appends.allSatisfy({ loaded.versions[$0.stream] != nil })
        else { return nil }
        var versions = loaded.versions
        for append in appends { versions[append.stream, default: 0] += UInt64(append.events.count) }
        do {
            let bytes = try snapshots.encode(state)
            return (snapshots.key, Snapshots.value(deciderVersion: snapshots.version, upcasters: snapshots.upcasters, versions: decider.streams.map { versions[$0] ?? 0 }, state: bytes))
        } catch {
            logger.info("a snapshot could not be encoded; none was written", metadata: [LogKeys.decider: "\(snapshots.name)", LogKeys.reason: "\(error)"])
            return nil
        }
    }

    /// What loading a decider's streams gave.
    struct Loaded<State> {
        var state: State
        var versions: [String: UInt64]
        var passedOver: [PassedOverEvent]
        /// How many events were read after the snapshot (all of them without one).
        var tail: Int
        /// The store's deletion count the load saw (read only for a snapshotting decider): a
        /// snapshot folded from it is not written once a deletion has committed since.
        var deletions: UInt64 = 0
    }

    /// Folds the decider's streams into its state, in position order across streams: from the
    /// latest snapshot when there is one, in one read snapshot of the store.
    func load<D: StreamDecider>(_ decider: D, snapshots: SnapshotCodec<D>?) async throws -> Loaded<D.State> {
        let streams = uniqued(decider.streams)
        let logger = logger
        var loaded = try await store.readTables { txn -> (state: D.State?, versions: [String: UInt64], decoded: [(UInt64, D.Event)], passedOver: [PassedOverEvent], tail: Int, deletions: UInt64) in
            var start: (state: D.State, versions: [String: UInt64])?
            if let snapshots, let bytes = try await txn.get(Snapshots.table, snapshots.key) {
                start = snapshots.read(bytes, streams: decider.streams, logger: logger)
            }
            var versions: [String: UInt64] = [:]
            var passedOver: [PassedOverEvent] = []
            var decoded: [(UInt64, D.Event)] = []
            var tail = 0
            for stream in streams {
                var version = start?.versions[stream] ?? 0
                try await txn.forEachEvent(inStream: stream, from: version + 1) { recorded in
                    version = recorded.version
                    tail += 1
                    do {
                        decoded.append((recorded.position, try D.Event(recorded: recorded)))
                    } catch {
                        passedOver.append(PassedOverEvent(recorded, reason: (error as? EventDecodingError)?.reason ?? "\(error)"))
                    }
                }
                // A stream whose events were deleted keeps its version: the append continues it. (Its
                // last event, when one was read, has the stream's version: deletions remove a prefix.)
                if version == (start?.versions[stream] ?? 0) { version = max(version, try await txn.streamVersion(stream)) }
                versions[stream] = version
            }
            let deletions = snapshots == nil ? 0 : try await txn.deletionFingerprint(consuming: nil)
            return (start?.state, versions, decoded, passedOver, tail, deletions)
        }
        if streams.count > 1 { loaded.decoded.sort { $0.0 < $1.0 } }
        var state = loaded.state ?? decider.initialState
        for (_, event) in loaded.decoded { decider.evolve(&state, with: event) }
        for event in loaded.passedOver {
            logger.info(
                "passed over an event the decider cannot read",
                metadata: [LogKeys.stream: "\(event.stream)", LogKeys.position: "\(event.position)", LogKeys.reason: "\(event.reason)"])
        }
        return Loaded(state: state, versions: loaded.versions, passedOver: loaded.passedOver, tail: loaded.tail, deletions: loaded.deletions)
    }

    private func uniqued(_ streams: [String]) -> [String] {
        var seen = Set<String>()
        return streams.filter { seen.insert($0).inserted }
    }

    /// A decided event ready to append, with its tags; ``CommandError/Code/unencodable`` when it
    /// cannot be encoded.
    static func encoded<E: RecordableEvent>(_ event: E, tags: [String]) throws -> NewEvent {
        var newEvent: NewEvent
        do {
            newEvent = try event.newEvent()
        } catch {
            throw CommandError(.unencodable, "A decided \(E.self) cannot be encoded (\(error)); nothing was written.")
        }
        newEvent.tags = tags
        return newEvent
    }

    /// The decided events as one append: consecutive events of a stream in one part, each loaded
    /// stream's first part guarded by the version read (streams not loaded take `.any`).
    private func appends<D: StreamDecider>(
        of events: [D.Event], with decider: D, versions: [String: UInt64], state: D.State
    ) throws -> (appends: [StreamAppend], events: [[NewEvent]]) {
        var appends: [StreamAppend] = []
        var guarded = Set<String>()
        for event in events {
            let stream = decider.stream(for: event)
            let newEvent = try Self.encoded(event, tags: decider.tags(for: event, in: state))
            if let last = appends.indices.last, appends[last].stream == stream {
                appends[last].events.append(newEvent)
                continue
            }
            var expected = ExpectedVersion.any
            if let version = versions[stream], guarded.insert(stream).inserted {
                expected = version == 0 ? .noStream : .exact(version)
            }
            appends.append(StreamAppend(stream: stream, events: [newEvent], expectedVersion: expected))
        }
        return (appends, appends.map(\.events))
    }
}

/// What a command did: the state after it, the events it decided and what the log recorded.
public struct CommandOutcome<D: Decider>: Sendable {
    /// The decider's state after the decided events (the state loaded when it decided none).
    public let state: D.State
    /// The events decided, in order (empty when there was nothing to do).
    public let events: [D.Event]
    /// The decided events as recorded: positions, versions, ids and times.
    public let recorded: [RecordedEvent]
    /// The events of the decider's streams it could not read, passed over when loading.
    public let passedOver: [PassedOverEvent]
    /// How many attempts it took (more than 1 when other writers got in between).
    public let attempts: Int
}

/// An event a fold passed over because it does not decode (a hand-appended event of a known type
/// with bad data, or an unknown type): where it is and why.
public struct PassedOverEvent: Sendable, Equatable, CustomStringConvertible {
    public let stream: String
    public let position: UInt64
    public let version: UInt64
    public let type: String
    /// Why it does not decode.
    public let reason: String

    public init(_ event: RecordedEvent, reason: String) {
        stream = event.stream
        position = event.position
        version = event.version
        type = event.type
        self.reason = reason
    }

    public var description: String { "position \(position) (\(type), version \(version) of '\(stream)'): \(reason)" }
}

/// The metadata keys this module logs with.
enum LogKeys {
    static let attempt = "commands.attempt"
    static let streams = "commands.streams"
    static let stream = "eventstore.stream"
    static let position = "eventstore.position"
    static let reason = "commands.reason"
    static let decider = "commands.decider"
}
