import EventStoreCore

/// The store's counts and sizes as one JSON object: what `esctl stats --json` prints and the
/// server's `GET /stats` answers, byte for byte.
public enum StatisticsJSON {
    /// `{"eventCount","streamCount","firstPosition","headPosition","fileSize","mapSize","pageSize","path"}`;
    /// `path` is the store's location (a directory, or a database URL without its password).
    public static func object(_ stats: StoreStatistics, location: String) -> String {
        var object = JSONObjectWriter()
        object.add("eventCount", stats.eventCount)
        object.add("streamCount", stats.streamCount)
        object.add("firstPosition", stats.firstPosition)
        object.add("headPosition", stats.headPosition)
        object.add("fileSize", stats.fileSize)
        object.add("mapSize", stats.mapSize)
        object.add("pageSize", stats.pageSize)
        object.add("path", location)
        return object.finish()
    }
}
