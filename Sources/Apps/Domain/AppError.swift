import AppModules
import EventStoreCore
import Foundation

/// The one error type of the apps: a command their rules refuse, or input they do not take.
/// Unless ``Code/recordedInvalid``, nothing was written.
public struct AppError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of refusal this is; a struct so that codes can be added without breaking a
    /// program's `switch`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        package enum Base: String, Sendable, CaseIterable {
            case goalNotSet, invalidState, invalidInput, notFound, duplicate, recordedInvalid
        }

        package let base: Base

        package init(_ base: Base) {
            self.base = base
        }

        /// `start` without a goal; the app shows "Set a goal to start".
        public static let goalNotSet = Code(.goalNotSet)
        /// The command is not allowed in the current state (a workout transition, a cancelled reservation).
        public static let invalidState = Code(.invalidState)
        /// The input breaks a rule: an empty text, a goal out of range, a key that is too long.
        public static let invalidInput = Code(.invalidInput)
        /// Something named does not exist: a site, a camper, a reservation, a queued alert.
        public static let notFound = Code(.notFound)
        /// Something that may exist once already does: a site number.
        public static let duplicate = Code(.duplicate)
        /// The command was recorded, but as invalid (a reservation's nights or overlap); see
        /// ``AppError/domain`` and ``AppError/domainCode``.
        public static let recordedInvalid = Code(.recordedInvalid)

        public var description: String { base.rawValue }
    }

    public let code: Code
    /// One sentence: what was wrong and what to do.
    public let message: String
    /// For ``Code/notFound``: the read model that lists what exists (`campers`, `campsites`,
    /// `reservations`, `alerts`), for a face to point to.
    public let listedBy: String?
    /// The error domain of a recorded rejection ("CampingManager").
    public let domain: String?
    /// Its code within that domain (5: invalid number of days).
    public let domainCode: Int?
    /// What was recorded anyway, for ``Code/recordedInvalid``.
    public let recordedEvents: [RecordedEvent]

    public init(
        _ code: Code, _ message: String, listedBy: String? = nil, domain: String? = nil, domainCode: Int? = nil,
        recordedEvents: [RecordedEvent] = []
    ) {
        self.code = code
        self.message = message
        self.listedBy = listedBy
        self.domain = domain
        self.domainCode = domainCode
        self.recordedEvents = recordedEvents
    }

    public var description: String { message }
}

/// Matches an error against a code in a `catch`: `catch AppError.Code.goalNotSet`.
public func ~= (code: AppError.Code, error: any Error) -> Bool {
    (error as? AppError)?.code == code
}

/// The apps' limits on what they take, in their own terms; input beyond them is
/// ``AppError/Code/invalidInput`` and records nothing.
public enum AppLimits {
    /// The largest goal, in steps.
    public static let maximumGoal = 10_000_000
    /// The most steps one pedometer report may add.
    public static let maximumStepsPerReport = 10_000_000
    /// The most meters one pedometer report may add.
    public static let maximumDistancePerReport = 1e9
    /// The farthest Nessie may be, in meters.
    public static let maximumNessieDistance = 1e12
    /// The longest chat message, alert text or shared address, in characters.
    public static let maximumTextCharacters = 4_000
    /// The longest camper name or phone number, in characters.
    public static let maximumNameCharacters = 200
    /// The longest user, room or campground key, in UTF-8 bytes (a stream name holds it).
    public static let maximumKeyBytes = 150
    /// The highest site number.
    public static let maximumSiteNumber = 1_000_000_000
    /// The most nights a stay may have (and the fewest, negative, a reservation may record).
    public static let maximumNights = 36_500
}

/// Checks the apps' keys (users, rooms, campgrounds) and texts.
enum Validate {
    /// A user, room or campground key: non-empty, printable, at most ``AppLimits/maximumKeyBytes`` bytes.
    static func key(_ key: String, _ kind: String) throws(AppError) {
        guard !key.isEmpty else { throw AppError(.invalidInput, "The \(kind) is empty; give a \(kind) name.") }
        guard key.utf8.count <= AppLimits.maximumKeyBytes else {
            throw AppError(.invalidInput, "The \(kind) '\(key.prefix(20))...' is longer than \(AppLimits.maximumKeyBytes) bytes; use a shorter name.")
        }
        guard !key.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw AppError(.invalidInput, "The \(kind) contains a control character; use printable characters only.")
        }
    }

    /// A text that must say something (not empty, not only white space), at most `limit` characters.
    static func text(_ text: String, _ what: String, limit: Int = AppLimits.maximumTextCharacters) throws(AppError) {
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw AppError(.invalidInput, "The \(what) is empty; give some text.")
        }
        let count = text.count
        guard count <= limit else {
            throw AppError(.invalidInput, "The \(what) is \(count) characters long; the limit is \(limit).")
        }
    }
}

extension AppError: CodedError {
    public var codeName: String { code.description }

    /// The apps' rules refuse (exit 1, HTTP 422); bad input and unknown names are the caller's.
    public var category: ErrorCategory {
        switch code.base {
        case .goalNotSet, .invalidState, .duplicate, .recordedInvalid: return .rejected
        case .invalidInput: return .invalidInput
        case .notFound: return .notFound
        }
    }

    public var httpStatus: Int {
        switch code.base {
        case .invalidInput: return 400
        case .notFound: return 404
        case .goalNotSet, .invalidState, .duplicate, .recordedInvalid: return 422
        }
    }
}

extension AppError: AppRefusal {
    /// The read model named by ``listedBy``, scoped by the campground for the campground's lists
    /// and by the user otherwise.
    public var listing: (projection: String, parameter: String)? {
        guard let listedBy else { return nil }
        return (listedBy, ["campers", "campsites", "reservations"].contains(listedBy) ? "campground" : "user")
    }

    /// A reservation recorded as invalid carries its error domain and code.
    public var details: [(String, JSONValue)] {
        guard code == .recordedInvalid else { return [] }
        var details: [(String, JSONValue)] = []
        if let domain { details.append(("domain", .string(domain))) }
        if let domainCode { details.append(("domainCode", .int(Int64(domainCode)))) }
        return details
    }
}
