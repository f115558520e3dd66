import EventStore
/// The one error type of the Commands module: a command a domain rule refused, or bad input.
/// Unless ``Code/recordedInvalid``, nothing was written.
public struct CommandError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable {
        /// `start` without a goal; the app shows "Set a goal to start".
        case goalNotSet
        /// The command is not allowed in the current state (a workout transition, a cancelled reservation).
        case invalidState
        /// The input breaks a rule: an empty text, a goal that is not positive, a negative increment.
        case invalidInput
        /// Something named does not exist: a site, a camper, a reservation, a queued alert.
        case notFound
        /// Something that may exist once already does: a site number.
        case duplicate
        /// The command was recorded, but as invalid (a reservation's nights or overlap); see
        /// ``domain`` and ``domainCode``.
        case recordedInvalid
        /// Other writers kept changing the streams; the command gave up after its retries.
        case conflict
    }

    public let code: Code
    /// One sentence: what was wrong and what to do.
    public let message: String
    /// The error domain of a recorded rejection ("CampingManager").
    public let domain: String?
    /// Its code within that domain (5: invalid number of days).
    public let domainCode: Int?
    /// What was recorded anyway, for ``Code/recordedInvalid``.
    public let recordedEvents: [RecordedEvent]

    public init(_ code: Code, _ message: String, domain: String? = nil, domainCode: Int? = nil, recordedEvents: [RecordedEvent] = []) {
        self.code = code
        self.message = message
        self.domain = domain
        self.domainCode = domainCode
        self.recordedEvents = recordedEvents
    }

    public var description: String { message }
}

/// Checks the keys of the domains (users, rooms, campgrounds) and names.
enum Validate {
    static let maximumKeyBytes = 150

    /// A user, room or campground key: non-empty, printable, at most 150 bytes.
    static func key(_ key: String, _ kind: String) throws(CommandError) {
        guard !key.isEmpty else { throw CommandError(.invalidInput, "The \(kind) is empty; give a \(kind) name.") }
        guard key.utf8.count <= maximumKeyBytes else {
            throw CommandError(.invalidInput, "The \(kind) '\(key.prefix(20))...' is longer than \(maximumKeyBytes) bytes; use a shorter name.")
        }
        guard !key.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw CommandError(.invalidInput, "The \(kind) contains a control character; use printable characters only.")
        }
    }

    /// A text that must say something: not empty, not only white space.
    static func text(_ text: String, _ what: String) throws(CommandError) {
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw CommandError(.invalidInput, "The \(what) is empty; give some text.")
        }
    }
}
