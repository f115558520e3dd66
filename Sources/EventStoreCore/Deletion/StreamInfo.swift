/// What the store knows of a stream: its version, how many of its events are in the log, and
/// what deletion and retention did to it.
public struct StreamInfo: Sendable, Equatable {
    /// The stream's name.
    public let stream: String
    /// The version of its last event ever appended (deleted events keep their versions: an
    /// append after a soft delete continues from here).
    public let version: UInt64
    /// The first version still in the log; greater than ``version`` when none is.
    public let firstVersion: UInt64
    /// How many of its events are in the log (`version - firstVersion + 1`, or 0).
    public let eventCount: UInt64
    /// Whether a hard delete tombstoned it: every append to it is refused.
    public let isTombstoned: Bool
    /// Its retention policy, or nil.
    public let retention: RetentionPolicy?

    package init(stream: String, version: UInt64, firstVersion: UInt64, isTombstoned: Bool, retention: RetentionPolicy?) {
        self.stream = stream
        self.version = version
        self.firstVersion = firstVersion
        self.eventCount = firstVersion > version ? 0 : version - firstVersion + 1
        self.isTombstoned = isTombstoned
        self.retention = retention
    }
}
