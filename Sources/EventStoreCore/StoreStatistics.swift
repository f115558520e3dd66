import Foundation

/// Counts and sizes of a store.
public struct StoreStatistics: Sendable, Equatable, Codable {
    /// Events in the log.
    public let eventCount: UInt64
    /// Streams with at least one event.
    public let streamCount: UInt64
    /// The position of the first event; 0 when the log is empty.
    public let firstPosition: UInt64
    /// The position of the last event; 0 when the log is empty.
    public let headPosition: UInt64
    /// The data file's size on disk, in bytes.
    public let fileSize: Int
    /// The memory map's current size, in bytes (it grows by itself).
    public let mapSize: Int
    /// LMDB's page size, in bytes.
    public let pageSize: Int
    /// Reader slots in use in LMDB's lock file, by any process: the reads running now, this
    /// process's pooled read transactions, and slots of processes that died while reading until
    /// they are cleared (0 when the store is read without LMDB's lock).
    public let readers: Int
    /// The process id of each of those slots: which processes hold snapshots (a long-running
    /// reader that keeps the data file growing, say).
    public let readerProcesses: [Int32]

    /// Statistics of a backend; fields it has no such thing for (a PostgreSQL store has no map
    /// and no reader table) are 0 or empty.
    package init(
        eventCount: UInt64, streamCount: UInt64, firstPosition: UInt64, headPosition: UInt64, fileSize: Int, mapSize: Int,
        pageSize: Int, readers: Int, readerProcesses: [Int32]
    ) {
        self.eventCount = eventCount
        self.streamCount = streamCount
        self.firstPosition = firstPosition
        self.headPosition = headPosition
        self.fileSize = fileSize
        self.mapSize = mapSize
        self.pageSize = pageSize
        self.readers = readers
        self.readerProcesses = readerProcesses
    }

}
