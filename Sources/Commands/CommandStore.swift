import EventStoreCore

/// What a ``CommandHandler`` asks of a store: the log to read and append to, and the tables its
/// snapshots live in. Every `EventLog` is one.
public typealias CommandStore = LogAppending & LogReading & LogTables
