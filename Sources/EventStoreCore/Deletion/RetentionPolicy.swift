/// How much of a stream the store keeps: events beyond the policy are removed by the writer in
/// the transaction of the stream's next append, and for every stream by ``LogMaintenance/purge()``.
/// Each removal is a deletion (a `$StreamDeleted` event records it, see ``StreamDeletion``).
/// A stream's newest event is never removed by age or count... unless `truncateBefore` is past it.
public struct RetentionPolicy: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Keep at most this many of the newest events (1 or more); nil: no limit.
    public var maxCount: UInt64?
    /// Keep events recorded at most this long before the writer's clock (1 µs or more); nil: no limit.
    public var maxAge: Duration?
    /// Remove every version before this one (1 or more); nil: none.
    public var truncateBefore: UInt64?

    /// A policy; every part is optional, and a policy with none keeps everything (it clears the
    /// stream's policy when set).
    public init(maxCount: UInt64? = nil, maxAge: Duration? = nil, truncateBefore: UInt64? = nil) {
        self.maxCount = maxCount
        self.maxAge = maxAge
        self.truncateBefore = truncateBefore
    }

    /// Whether the policy limits nothing.
    public var isEmpty: Bool { maxCount == nil && maxAge == nil && truncateBefore == nil }

    /// The age limit in microseconds (rounded down), as the store keeps it.
    package var maxAgeMicroseconds: UInt64? {
        maxAge.map { duration in
            let (seconds, attoseconds) = duration.components
            let micros = seconds.multipliedReportingOverflow(by: 1_000_000)
            guard !micros.overflow, seconds >= 0 else { return seconds < 0 ? 0 : UInt64.max }
            return UInt64(micros.partialValue) &+ UInt64(max(attoseconds, 0) / 1_000_000_000_000)
        }
    }

    /// Throws ``EventStoreError/Code/invalidInput`` for a part that is 0 or negative.
    package func validate() throws(EventStoreError) {
        if maxCount == 0 {
            throw EventStoreError(.invalidInput, "The maximum count is 0; give 1 or more (or delete the stream to remove every event).")
        }
        if let age = maxAgeMicroseconds, age == 0 {
            throw EventStoreError(.invalidInput, "The maximum age is under a microsecond; give a positive duration.")
        }
        if truncateBefore == 0 {
            throw EventStoreError(.invalidInput, "The version to truncate before is 0; give a version of 1 or more.")
        }
        // Every backend keeps them as signed 64-bit numbers (PostgreSQL's bigint).
        let largest = UInt64(Int64.max)
        if let maxCount, maxCount > largest {
            throw EventStoreError(.invalidInput, "The maximum count is over \(largest); give at most that.")
        }
        if let truncateBefore, truncateBefore > largest {
            throw EventStoreError(.invalidInput, "The version to truncate before is over \(largest); give at most that.")
        }
        if let age = maxAgeMicroseconds, age > UInt64(Int64.max) {
            throw EventStoreError(.invalidInput, "The maximum age is too long; give at most 100,000 years.")
        }
    }

    /// The three numbers the store keeps (0 for a part not set).
    package var stored: (UInt64, UInt64, UInt64) { (maxCount ?? 0, maxAgeMicroseconds ?? 0, truncateBefore ?? 0) }

    /// The policy of three stored numbers; nil when all are 0.
    package init?(stored maxCount: UInt64, _ maxAgeMicroseconds: UInt64, _ truncateBefore: UInt64) {
        guard maxCount != 0 || maxAgeMicroseconds != 0 || truncateBefore != 0 else { return nil }
        self.maxCount = maxCount == 0 ? nil : maxCount
        self.maxAge = maxAgeMicroseconds == 0 ? nil : .microseconds(Int64(clamping: maxAgeMicroseconds))
        self.truncateBefore = truncateBefore == 0 ? nil : truncateBefore
    }

    /// The first version to keep of a stream at `version` whose first kept version is `first`,
    /// at `now` (microseconds since 1970). `firstRecorded(from, cutoff)` gives the first version
    /// from `from` on recorded at or after `cutoff`, or `version + 1` when none is (asked only
    /// when the policy has an age limit).
    package func firstKept(
        version: UInt64, first: UInt64, now: Int64, firstRecorded: (_ from: UInt64, _ cutoff: Int64) throws -> UInt64
    ) rethrows -> UInt64 {
        let (keep, cutoff) = firstKeptByCount(version: version, first: first, now: now)
        guard let cutoff else { return keep }
        return Self.firstKept(version: version, byCount: keep, byAge: try firstRecorded(keep, cutoff))
    }

    /// The first step of ``firstKept(version:first:now:firstRecorded:)``, for a backend that
    /// asks for the first recorded version asynchronously: the first version to keep by count and
    /// truncation, and the cutoff (microseconds since 1970) to ask `firstRecorded` about from that
    /// version on; nil when the policy has no age limit or nothing is left to ask about. Finish
    /// with ``firstKept(version:byCount:byAge:)``.
    package func firstKeptByCount(version: UInt64, first: UInt64, now: Int64) -> (keep: UInt64, cutoff: Int64?) {
        var keep = first
        if let maxCount, version >= maxCount { keep = max(keep, version - maxCount + 1) }
        if let truncateBefore { keep = max(keep, truncateBefore) }
        guard let age = maxAgeMicroseconds, keep <= version else { return (min(keep, version &+ 1), nil) }
        let cutoff = now.subtractingReportingOverflow(Int64(clamping: age))
        return (keep, cutoff.overflow ? Int64.min : cutoff.partialValue)
    }

    /// The first version to keep, from the version kept by count and the first version
    /// recorded at or after the age cutoff.
    package static func firstKept(version: UInt64, byCount: UInt64, byAge: UInt64) -> UInt64 {
        min(max(byCount, byAge), version &+ 1)
    }

    /// `max-count N, max-age Ss, truncate-before V` (the parts set), or `none`.
    public var description: String {
        var parts: [String] = []
        if let maxCount { parts.append("max-count \(maxCount)") }
        if let age = maxAgeMicroseconds {
            parts.append(age % 1_000_000 == 0 ? "max-age \(age / 1_000_000)s" : "max-age \(Double(age) / 1e6)s")
        }
        if let truncateBefore { parts.append("truncate-before \(truncateBefore)") }
        return parts.isEmpty ? "none" : parts.joined(separator: ", ")
    }
}
