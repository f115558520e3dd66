/// The read models every store has whatever apps run on it: a count of events per type and a
/// summary per stream. Faces register them beside the apps' own.
public enum LogSummaries {
    /// ``EventCountByType`` and ``StreamSummary``.
    public static var all: [any Projection] { [EventCountByType(), StreamSummary()] }
}
