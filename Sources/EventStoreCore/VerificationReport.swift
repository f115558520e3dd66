import Foundation

/// What `EventStore.verify()` found: counts, and every problem, each naming where it is.
public struct VerificationReport: Sendable, Equatable {
    /// One inconsistency.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        /// Which check found it: `positions`, `records`, `versions`, `streams`, `index`, `ids`, `meta`, or a
        /// caller's own (projections).
        public let check: String
        /// What is wrong, precisely (positions, versions, names).
        public let detail: String

        public init(check: String, detail: String) {
            self.check = check
            self.detail = detail
        }

        public var description: String { "\(check): \(detail)" }
    }

    /// Records in the log.
    public var events: UInt64 = 0
    /// Entries in `streams`.
    public var streams: UInt64 = 0
    /// The last position.
    public var headPosition: UInt64 = 0
    /// Records written before records carried checksums (record format 1): read and checked
    /// for their structure, but a changed byte in them cannot be told.
    public var uncheckedRecords: UInt64 = 0
    /// The problems found, at most ``maximumProblems`` (``omittedProblems`` counts the rest).
    public var problems: [Problem] = []
    /// Problems found beyond the ones listed.
    public var omittedProblems = 0

    /// How many problems a report lists.
    public static let maximumProblems = 200

    /// Whether nothing is wrong.
    public var isClean: Bool { problems.isEmpty && omittedProblems == 0 }

    public init() {}

    /// Adds a problem (counted beyond the listing limit).
    public mutating func add(_ check: String, _ detail: String) {
        if problems.count < Self.maximumProblems {
            problems.append(Problem(check: check, detail: detail))
        } else {
            omittedProblems += 1
        }
    }
}
