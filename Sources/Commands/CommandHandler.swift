import EventStore
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

        public init(
            maximumAttempts: Int = 5, backoff: Duration = .milliseconds(1), clock: any Clock<Duration> = ContinuousClock(),
            logger: Logger? = nil
        ) {
            self.maximumAttempts = max(1, maximumAttempts)
            self.backoff = backoff
            self.clock = clock
            self.logger = logger
        }
    }

    /// The store commands are run against.
    public let store: EventStore
    /// How the handler retries and logs.
    public let configuration: Configuration

    /// Where the handler logs: its configuration's logger, else the store's.
    let logger: Logger

    public init(store: EventStore, configuration: Configuration = Configuration()) {
        self.store = store
        self.configuration = configuration
        logger = configuration.logger ?? store.configuration.logger
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
            let loaded = try load(decider)
            let events = try decider.decide(command, state: loaded.state)
            var state = loaded.state
            for event in events { decider.evolve(&state, with: event) }
            guard !events.isEmpty else {
                return CommandOutcome(state: state, events: [], recorded: [], passedOver: loaded.passedOver, attempts: attempt)
            }
            let (appends, newEvents) = try appends(of: events, with: decider, versions: loaded.versions)
            do {
                let results = try await store.append(appends)
                var recorded: [RecordedEvent] = []
                for (result, events) in zip(results, newEvents) {
                    // An idempotent retry recorded nothing new: what the log holds is the record.
                    recorded += result.alreadyRecorded ? try result.positions.compactMap(store.event(at:)) : result.recordedEvents(events)
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

    /// The decider's state as its streams tell it now, and the events it passed over (as
    /// ``handle(_:with:)`` loads it, without deciding anything).
    public func state<D: StreamDecider>(of decider: D) throws -> (state: D.State, passedOver: [PassedOverEvent]) {
        let loaded = try load(decider)
        return (loaded.state, loaded.passedOver)
    }

    /// What loading a decider's streams gave.
    struct Loaded<State> {
        var state: State
        var versions: [String: UInt64]
        var passedOver: [PassedOverEvent]
    }

    /// Folds the decider's streams into its state, in position order across streams.
    func load<D: StreamDecider>(_ decider: D) throws -> Loaded<D.State> {
        var versions: [String: UInt64] = [:]
        var passedOver: [PassedOverEvent] = []
        var decoded: [(position: UInt64, event: D.Event)] = []
        for stream in decider.streams where versions[stream] == nil {
            var version: UInt64 = 0
            try store.forEachEvent(inStream: stream) { view in
                version = view.version
                let recorded = view.recordedEvent()
                do {
                    decoded.append((view.position, try D.Event(recorded: recorded)))
                } catch {
                    passedOver.append(PassedOverEvent(recorded, reason: (error as? EventDecodingError)?.reason ?? "\(error)"))
                }
            }
            versions[stream] = version
        }
        if decider.streams.count > 1 { decoded.sort { $0.position < $1.position } }
        var state = decider.initialState
        for (_, event) in decoded { decider.evolve(&state, with: event) }
        for event in passedOver {
            logger.info(
                "passed over an event the decider cannot read",
                metadata: [LogKeys.stream: "\(event.stream)", LogKeys.position: "\(event.position)", LogKeys.reason: "\(event.reason)"])
        }
        return Loaded(state: state, versions: versions, passedOver: passedOver)
    }

    /// The decided events as one append: consecutive events of a stream in one part, each loaded
    /// stream's first part guarded by the version read (streams not loaded take `.any`).
    private func appends<D: StreamDecider>(
        of events: [D.Event], with decider: D, versions: [String: UInt64]
    ) throws -> (appends: [StreamAppend], events: [[NewEvent]]) {
        var appends: [StreamAppend] = []
        var guarded = Set<String>()
        for event in events {
            let stream = decider.stream(for: event)
            let newEvent: NewEvent
            do {
                newEvent = try event.newEvent()
            } catch {
                throw CommandError(.unencodable, "A decided \(D.Event.self) cannot be encoded (\(error)); nothing was written.")
            }
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
}
