import EventStoreCore

/// What a ``ProjectionRunner`` asks of a store: the log to fold and to append its decisions and
/// processors' events to, the tables the states and checkpoints live in, and who owns a rebuild
/// under way. Every `EventLog` is one; maintenance and inspection it never needs.
public typealias ProjectionStore = LogAppending & LogReading & LogTables & LogOwnership
