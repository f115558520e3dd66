import AppModules
import Commands
import EventStoreCore

/// The apps' commands, run against an event store: each through its decider and one
/// ``CommandHandler`` (load, decide, append with the versions read, retry), plus the chat
/// countdown, paced on an injected clock. Keys (users, rooms, campgrounds) default to "default".
public final class AppBackend: Sendable {
    /// The store the events go to.
    public let store: any EventLog
    /// The clock the chat countdown waits on.
    public let clock: any Clock<Duration>
    /// The handler every command goes through.
    public let handler: CommandHandler

    /// A backend over `store`; `clock` paces countdowns (inject a test clock in tests).
    ///
    /// Throws ``EventStoreError/Code/invalidInput`` when the store was opened without the
    /// upcasters of the apps' events (``AppCatalog/upcasters``): its older events would not
    /// read as the apps expect.
    public convenience init(
        store: any EventLog, clock: any Clock<Duration> = ContinuousClock(),
        configuration: CommandHandler.Configuration = CommandHandler.Configuration()
    ) throws(EventStoreError) {
        try self.init(AppContext(store: store, clock: clock, configuration: configuration), reaching: AppCatalog.schemaVersions)
    }

    /// A backend on `context`'s store, clock and handler, for the commands of apps whose evolved
    /// types are `versions` (an app module checks its own). Throws
    /// ``EventStoreError/Code/invalidInput`` when the store was opened without the upcasters
    /// that bring older events of those types to them.
    public init(_ context: AppContext, reaching versions: [String: UInt16]) throws(EventStoreError) {
        try context.store.configuration.checkUpcasters(reaching: versions)
        store = context.store
        clock = context.clock
        handler = context.handler
    }

    // MARK: Fitness and alerts

    /// Runs a workout command for `user` (see ``FitnessDecider``).
    public func fitness(_ command: FitnessCommand, user: String = AppStreams.defaultKey) async throws -> CommandOutcome<FitnessDecider> {
        try Validate.key(user, "user")
        return try await handler.handle(command, with: FitnessDecider(user: user))
    }

    /// Runs an alert command for `user` (see ``AlertDecider``).
    public func alerts(_ command: AlertCommand, user: String = AppStreams.defaultKey) async throws -> CommandOutcome<AlertDecider> {
        try Validate.key(user, "user")
        return try await handler.handle(command, with: AlertDecider(user: user))
    }

    /// The user's alert queue as its stream tells it.
    public func alertQueue(user: String = AppStreams.defaultKey) async throws -> AlertQueue {
        try await handler.state(of: AlertDecider(user: user)).state
    }

    /// The user's workout and alert queue as their streams tell them.
    public func fitnessState(user: String = AppStreams.defaultKey) async throws -> FitnessState {
        try await handler.state(of: FitnessDecider(user: user)).state
    }

    // MARK: Chat

    /// Records a chat command of `user` in `room` and returns the recorded event.
    public func chat(_ command: ChatCommand, user: String, room: String = AppStreams.defaultKey) async throws -> RecordedEvent {
        try Validate.key(room, "room")
        let outcome = try await handler.handle(command, with: ChatDecider(room: room, user: user))
        guard let recorded = outcome.recorded.first else {
            throw EventStoreError(.storageFailure, "The chat message was decided but not recorded.")
        }
        return recorded
    }

    /// Counts down to `text`: "3...", "2...", "1...", then "🎉 TEXT", each recorded as a message of
    /// `user`, `interval` apart on the backend's clock. `onMessage` sees each one as it is
    /// recorded. Cancelling the task stops the countdown (what was recorded stays); an empty
    /// text records nothing and throws ``AppError/Code/invalidInput``.
    @discardableResult
    public func countdown(
        to text: String, user: String, room: String = AppStreams.defaultKey, interval: Duration = .seconds(1),
        onMessage: @Sendable (RecordedEvent) -> Void = { _ in }
    ) async throws -> [RecordedEvent] {
        try Validate.key(user, "user")
        try Validate.key(room, "room")
        try Validate.text(text, "countdown text")
        var recorded: [RecordedEvent] = []
        for (index, step) in ChatDecider.countdown(to: text).enumerated() {
            if index > 0 {
                do {
                    try await clock.sleep(for: interval)
                } catch is CancellationError {
                    return recorded
                }
            }
            if Task.isCancelled { return recorded }
            let message = try await chat(.countdownStep(step), user: user, room: room)
            recorded.append(message)
            onMessage(message)
        }
        return recorded
    }

    // MARK: Color calculator

    /// Runs a calculator command (see ``ColorDecider``); returns the display after it.
    public func color(_ command: ColorCommand, calculator: String = AppStreams.defaultKey) async throws -> CommandOutcome<ColorDecider> {
        try Validate.key(calculator, "calculator")
        return try await handler.handle(command, with: ColorDecider(calculator: calculator))
    }

    /// The calculator's display as its stream tells it.
    public func colorDisplay(calculator: String = AppStreams.defaultKey) async throws -> ColorDisplay {
        try await handler.state(of: ColorDecider(calculator: calculator)).state
    }

    // MARK: Campground

    /// What a campground command did: the campground after it and the event recorded.
    public struct CampgroundOutcome: Sendable, Equatable {
        public let campground: Campground
        public let recorded: [RecordedEvent]
        /// The reservation recorded or cancelled, for those commands.
        public let reservation: Reservation?
        /// The camper added, for add-camper.
        public let camper: Camper?
        /// Events of the campground's stream that did not decode, passed over.
        public let passedOver: [PassedOverEvent]
    }

    /// Runs a campground command (see ``CampgroundDecider``). A reservation recorded as
    /// "Invalid" is recorded, then thrown as ``AppError/Code/recordedInvalid`` with its problem,
    /// the error domain "CampingManager" and code 5 (invalid number of days) or 6 (site already
    /// reserved), and the recorded events.
    ///
    /// Adding a site and reserving are decided on the part of the campground they span and
    /// appended on that condition (``CampgroundBookingDecider``): the outcome's campground is then
    /// that part (all sites, for a site added; the site, the camper and the last reservation, for
    /// a reservation). A campground whose events were recorded without tags (by a version before
    /// them) is decided whole, as every other command is.
    public func campground(
        _ command: CampgroundCommand, campground name: String = AppStreams.defaultKey
    ) async throws -> CampgroundOutcome {
        try Validate.key(name, "campground")
        let outcome: (state: Campground, events: [CampgroundEvent], recorded: [RecordedEvent], passedOver: [PassedOverEvent])
        switch command {
        case .addSite, .reserve:
            if try await isTagged(campground: name) {
                let booked = try await handler.handle(command, with: CampgroundBookingDecider(campground: name))
                outcome = (booked.state, booked.events, booked.recorded, booked.passedOver)
                break
            }
            fallthrough
        default:
            let decided = try await handler.handle(command, with: CampgroundDecider(campground: name))
            outcome = (decided.state, decided.events, decided.recorded, decided.passedOver)
        }
        let campground = outcome.state
        let result = { (reservation: Reservation?, camper: Camper?) in
            CampgroundOutcome(
                campground: campground, recorded: outcome.recorded, reservation: reservation, camper: camper, passedOver: outcome.passedOver)
        }
        switch outcome.events.first {
        case let .reservationRecorded(reservation)? where reservation.status == .invalid:
            let problem = reservation.problem ?? CampgroundDecider.invalidNights.problem
            let code = problem == CampgroundDecider.siteTaken.problem ? CampgroundDecider.siteTaken.code : CampgroundDecider.invalidNights.code
            throw AppError(
                .recordedInvalid,
                "\(problem) (reservation \(reservation.reservationId) recorded as Invalid; \(CampgroundDecider.errorDomain) error \(code)).",
                domain: CampgroundDecider.errorDomain, domainCode: code, recordedEvents: outcome.recorded)
        case let .reservationRecorded(reservation)?:
            return result(Reservation(reservation), nil)
        case let .reservationCancelled(cancelled)?:
            return result(campground.reservation(cancelled.reservationId), nil)
        case let .camperAdded(added)?:
            return result(nil, Camper(id: added.camperId, fullName: added.fullName, phoneNumber: added.phoneNumber))
        default:
            return result(nil, nil)
        }
    }

    /// Whether the campground's events carry their tags: its first event does (or it has none yet).
    private func isTagged(campground name: String) async throws -> Bool {
        guard let first = try await handler.store.readStream(AppStreams.campground(name), from: nil, direction: .forward, limit: 1).first
        else { return true }
        return first.tags.contains(CampgroundTags.campground(name))
    }

    /// The campground as its stream tells it.
    public func campground(named name: String = AppStreams.defaultKey) async throws -> Campground {
        try await handler.state(of: CampgroundDecider(campground: name)).state
    }
}
