import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one error type of the EventStore module.
///
/// Every failure carries a ``Code`` a program can switch on, a one-sentence ``message`` that says
/// what was wrong and what to do, and, when the failure came from below (LMDB or the operating
/// system), the ``cause``. Version conflicts also list each stream whose expectation failed.
public struct EventStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is. Stable: programs and `esctl`'s exit codes depend on it. A
    /// struct, not an enum, so that codes can be added without breaking a program's `switch`
    /// (switch with a `default`); match one in a `catch` with `catch EventStoreError.Code.versionConflict`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// The codes as an enum, for code of this package that must handle every one.
        package enum Base: String, Sendable, CaseIterable {
            case invalidInput, versionConflict, idempotencyConflict, notFound, storeUnavailable, damaged, storageFull, closed,
                storageFailure, alreadyProcessed, upcastFailed, streamTombstoned, conditionFailed, outcomeUnknown
        }

        package let base: Base

        package init(_ base: Base) {
            self.base = base
        }

        /// The caller's input broke a rule (a name, a size, a limit, a malformed value). Nothing was written.
        public static let invalidInput = Code(.invalidInput)
        /// An expected version did not match the stream's actual version. Nothing was written.
        public static let versionConflict = Code(.versionConflict)
        /// An event id is already recorded with other content (or only part of an append was). Nothing was written.
        public static let idempotencyConflict = Code(.idempotencyConflict)
        /// Something the caller named does not exist.
        public static let notFound = Code(.notFound)
        /// The store cannot be opened or used: a missing permission, a path that is a file,
        /// a directory that is not an event store, or the directory is already open in this process.
        public static let storeUnavailable = Code(.storeUnavailable)
        /// The store's files are damaged: a truncated or corrupted data file, an undecodable record.
        public static let damaged = Code(.damaged)
        /// The disk or the address space is full; the store could not grow.
        public static let storageFull = Code(.storageFull)
        /// The store was closed; open it again to continue.
        public static let closed = Code(.closed)
        /// An unexpected failure of LMDB or the operating system; the cause says which.
        public static let storageFailure = Code(.storageFailure)

        /// An append carried a processor's tracking position that is not beyond the one already
        /// recorded for it: the events it reacts to were handled before. Nothing was written.
        public static let alreadyProcessed = Code(.alreadyProcessed)

        /// An upcaster threw on a recorded event: the event cannot be shown in its current shape.
        /// Fix the upcaster (or read the store without upcasters to see the event as stored).
        public static let upcastFailed = Code(.upcastFailed)

        /// The stream was deleted with a tombstone (a hard delete): it refuses every append, and
        /// its name cannot be used again. Nothing was written.
        public static let streamTombstoned = Code(.streamTombstoned)

        /// A conditional append (``AppendCondition``) found an event recorded after its position
        /// that matches its query: the decision was made without a fact that exists now. Read
        /// again and decide again. Nothing was written. ``EventStoreError/position`` is the first
        /// matching event's position, ``EventStoreError/conditionItem`` the item it matched.
        public static let conditionFailed = Code(.conditionFailed)

        /// An append was sent and the connection to the database failed before its answer came,
        /// and retrying it by its event ids (after a failover, say) failed too: it may or may not
        /// have been recorded. Append the same events again with the same ids when the store is
        /// reachable: they are then answered as recorded or written, once. Events without ids of
        /// the caller's cannot be matched that way; read the stream to learn what is there.
        public static let outcomeUnknown = Code(.outcomeUnknown)

        /// The code's name (`versionConflict`).
        public var description: String { base.rawValue }
    }

    /// Where a failure came from, when it came from below this module.
    public enum Cause: Sendable, Equatable, CustomStringConvertible {
        /// An LMDB return code, with LMDB's own description of it.
        case lmdb(code: Int32, description: String)
        /// An `errno` value from a system call, with its description.
        case system(errno: Int32, description: String)
        /// A database server's error: PostgreSQL's SQLSTATE code and its message.
        case database(code: String, description: String)

        public var description: String {
            switch self {
            case let .lmdb(code, description): return "LMDB \(code): \(description)"
            case let .system(errno, description): return "errno \(errno): \(description)"
            case let .database(code, description): return "SQLSTATE \(code): \(description)"
            }
        }
    }

    /// What kind of failure this is.
    public let code: Code
    /// One sentence saying what was wrong and what to do.
    public let message: String
    /// The lower-level failure, if any.
    public let cause: Cause?
    /// For ``Code/versionConflict``: each stream whose expectation failed. Empty otherwise.
    public let conflicts: [VersionConflict]
    /// For ``Code/upcastFailed``: the position of the event that could not be upcast; for
    /// ``Code/conditionFailed``: the position of the first event that matched. Nil otherwise.
    public let position: UInt64?
    /// For ``Code/conditionFailed``: the index (from 0) of the query item the event matched.
    public let conditionItem: Int?

    /// Creates an error; `conflicts` is only meaningful with ``Code/versionConflict``, `position`
    /// with ``Code/upcastFailed``.
    public init(
        _ code: Code, _ message: String, cause: Cause? = nil, conflicts: [VersionConflict] = [], position: UInt64? = nil,
        conditionItem: Int? = nil
    ) {
        self.conditionItem = conditionItem
        self.code = code
        self.message = message
        self.cause = cause
        self.conflicts = conflicts
        self.position = position
    }

    public var description: String {
        if let cause { return "\(message) (\(cause))" }
        return message
    }

    /// Whether the store refused because this process may not write it: files or a file system
    /// read-only for this user, a PostgreSQL standby or read-only transaction, a role without the
    /// privilege. Opening it ``OpenMode/readOnly`` may still read it. False for every other
    /// failure (a server that cannot be reached, a full disk), which reading would not cure.
    public var refusesWriting: Bool {
        guard code == .storeUnavailable else { return false }
        switch cause {
        case let .lmdb(code, _)?: return code == EACCES || code == EPERM || code == EROFS
        case let .system(errno, _)?: return errno == EACCES || errno == EPERM || errno == EROFS
        case let .database(state, _)?: return state == "25006" || state == "42501"
        case nil: return false
        }
    }

    /// The LMDB return code behind this error, if it came from LMDB.
    package var lmdbCode: Int32? {
        if case let .lmdb(code, _)? = cause { return code }
        return nil
    }
}

/// Matches an error against a code in a `catch` or `switch`: `catch EventStoreError.Code.versionConflict`.
public func ~= (code: EventStoreError.Code, error: any Error) -> Bool {
    (error as? EventStoreError)?.code == code
}

/// One stream whose expected version did not hold.
public struct VersionConflict: Sendable, Equatable, CustomStringConvertible {
    /// The stream's name.
    public let stream: String
    /// What the caller expected.
    public let expected: ExpectedVersion
    /// The stream's version when the append was attempted (0: the stream did not exist).
    public let actual: UInt64

    public init(stream: String, expected: ExpectedVersion, actual: UInt64) {
        self.stream = stream
        self.expected = expected
        self.actual = actual
    }

    public var description: String {
        let actualText = actual == 0 ? "no stream (version 0)" : "version \(actual)"
        return "stream '\(stream)' expected \(expected) but is at \(actualText)"
    }
}

extension EventStoreError {
    /// Maps the current `errno` of a failed system call to an error.
    package static func system(_ operation: String, errno code: Int32 = errno) -> EventStoreError {
        let cause = Cause.system(errno: code, description: String(cString: strerror(code)))
        switch code {
        case EACCES, EPERM, EROFS:
            return EventStoreError(
                .storeUnavailable, "Permission denied while \(operation); check the directory's permissions.",
                cause: cause)
        case ENOTDIR, EEXIST:
            return EventStoreError(
                .storeUnavailable, "Cannot use the store path while \(operation): it is not a directory.",
                cause: cause)
        case ENOENT:
            return EventStoreError(
                .storeUnavailable, "A directory on the path does not exist while \(operation); create it first or choose another path.",
                cause: cause)
        case ENOSPC, EDQUOT, EFBIG:
            return EventStoreError(
                .storageFull, "The disk is full while \(operation); free some space and try again.", cause: cause)
        case ENOMEM:
            return EventStoreError(
                .storeUnavailable,
                "There is not enough memory while \(operation); raise the process's limits (ulimit -v) or free memory.",
                cause: cause)
        default:
            return EventStoreError(.storageFailure, "A system call failed while \(operation).", cause: cause)
        }
    }

    /// The error itself when it is an ``EventStoreError``; otherwise a storage failure that names it.
    package static func wrapping(_ error: any Error) -> EventStoreError {
        error as? EventStoreError ?? EventStoreError(.storageFailure, "An unexpected error occurred: \(error).")
    }

    package static let closedStore = EventStoreError(.closed, "The store is closed; open it again to continue.")

    // The refusals every backend words the same way.

    /// A version conflict naming every stream whose expectation failed.
    package static func versionConflict(_ conflicts: [VersionConflict]) -> EventStoreError {
        let text = conflicts.map(\.description).joined(separator: "; ")
        return EventStoreError(.versionConflict, "Version conflict: \(text); read the stream again and retry.", conflicts: conflicts)
    }

    /// An id given again with other content.
    package static func idRecordedWithOtherContent(_ id: UUID, at position: UInt64) -> EventStoreError {
        EventStoreError(
            .idempotencyConflict,
            "The event id \(id.lowercasedString) is already recorded with other content (at position \(position)); give a new id for a new event.")
    }

    /// An append to (or a delete of) a stream a hard delete tombstoned.
    package static func tombstoned(_ stream: String) -> EventStoreError {
        EventStoreError(
            .streamTombstoned, "The stream '\(stream)' was deleted for good (tombstoned) and takes no more events; use another stream name.")
    }

    /// An append some of whose ids are recorded and others not.
    package static let partlyRecorded = EventStoreError(
        .idempotencyConflict,
        "Some events of this append are already recorded and others are not; retry with exactly the original events or with new ids.")

    /// An id, generated or given twice in one append, that is already recorded when written.
    /// The refusal of a conditional append: the event at `position` matched item `item` of its query.
    package static func conditionFailed(at position: UInt64, item: Int) -> EventStoreError {
        EventStoreError(
            .conditionFailed,
            "The append's condition failed: the event at position \(position) matches item \(item + 1) of its query, so nothing was written; read again and decide again.",
            position: position, conditionItem: item)
    }

    /// The refusal of a condition whose position no read can have returned: beyond the head.
    package static func conditionBeyondHead(_ after: UInt64, head: UInt64) -> EventStoreError {
        EventStoreError(
            .invalidInput,
            "The condition's position \(after) is beyond the head \(head); give the head a read returned (QueryResult.head), or none for the whole log.")
    }

    package static func generatedIDRecorded(_ id: UUID) -> EventStoreError {
        EventStoreError(
            .idempotencyConflict,
            "The id generator made an id that is already recorded (\(id.lowercasedString)); check the injected id generator.")
    }
}

extension EventStoreError: CodedError {
    public var codeName: String { code.description }

    public var category: ErrorCategory {
        switch code.base {
        case .invalidInput: return .invalidInput
        case .versionConflict, .alreadyProcessed, .conditionFailed: return .conflict
        case .idempotencyConflict: return .idempotencyConflict
        case .notFound: return .notFound
        case .storeUnavailable, .damaged, .closed, .storageFull, .outcomeUnknown: return .unavailable
        case .storageFailure, .upcastFailed: return .internalFailure
        // A tombstoned stream refuses appends by rule, as a decider refuses a command.
        case .streamTombstoned: return .rejected
        }
    }

    /// Conflicts 409, a tombstoned stream 410, missing things 404, bad input 400, a closed or
    /// unavailable store and an unknown outcome 503 (try again, with the same ids); a damaged or
    /// full store, and failures underneath, 500.
    public var httpStatus: Int {
        switch code.base {
        case .invalidInput: return 400
        case .versionConflict, .idempotencyConflict, .alreadyProcessed, .conditionFailed: return 409
        case .streamTombstoned: return 410
        case .notFound: return 404
        case .closed, .storeUnavailable, .outcomeUnknown: return 503
        case .damaged, .storageFull, .storageFailure, .upcastFailed: return 500
        }
    }

    /// A version conflict's first stream (`stream`, `expected`, `actual`) and every stream's
    /// (`conflicts`); nothing for the other codes.
    public var details: [(String, JSONValue)] {
        guard code == .versionConflict, let first = conflicts.first else { return [] }
        func members(_ conflict: VersionConflict) -> [(String, JSONValue)] {
            [("stream", .string(conflict.stream)), ("expected", .string(conflict.expected.text)), ("actual", .int(Int64(clamping: conflict.actual)))]
        }
        return members(first) + [("conflicts", .array(conflicts.map { .object(members($0)) }))]
    }
}
