import EventStoreCore

/// What consumer groups ask of a store: the log to deliver and append to, the tables their
/// memberships, leases and positions live in, and whether a member's handle is still open. Every
/// `EventLog` is one.
public typealias GroupStore = LogAppending & LogReading & LogTables & LogOwnership
