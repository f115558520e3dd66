import EventStoreCore
import Projections

/// How the apps name their streams: one stream per key (a user, a room, a campground), so one
/// log serves many. Keys follow the rules of stream names.
public enum AppStreams {
    /// The key used when none is given.
    public static let defaultKey = "default"

    public static let fitnessPrefix = "fitness-"
    public static let alertsPrefix = "alerts-"
    public static let chatPrefix = "chat-"
    public static let campgroundPrefix = "campground-"
    public static let colorPrefix = "color-"

    /// A user's workout.
    public static func fitness(_ user: String) -> String { fitnessPrefix + user }
    /// A user's alert queue.
    public static func alerts(_ user: String) -> String { alertsPrefix + user }
    /// A chat room.
    public static func chat(_ room: String) -> String { chatPrefix + room }
    /// A campground.
    public static func campground(_ name: String) -> String { campgroundPrefix + name }
    /// A color calculator.
    public static func color(_ calculator: String) -> String { colorPrefix + calculator }

    /// A row key of one string part, the key of a stream with the given prefix (made from its
    /// bytes without an intermediate string); nil for another stream.
    public static func rowKey(of stream: String, prefix: String) -> RowKey? {
        var stream = stream
        return stream.withUTF8 { rowKey(ofStream: UnsafeRawBufferPointer($0), prefix: prefix) }
    }

    /// The same, from the stream name's bytes read in place (``EventView/streamUTF8``).
    public static func rowKey(ofStream stream: UnsafeRawBufferPointer, prefix: String) -> RowKey? {
        let prefixLength = prefix.utf8.count
        guard stream.count > prefixLength, stream.starts(with: prefix.utf8) else { return nil }
        var key = RowKey()
        key.append(utf8Bytes: UnsafeRawBufferPointer(rebasing: stream[prefixLength...]))
        return key
    }

    /// The key of a stream with the given prefix; nil for another stream.
    public static func key(of stream: String, prefix: String) -> String? {
        guard stream.hasPrefix(prefix), stream.utf8.count > prefix.utf8.count else { return nil }
        return String(stream.dropFirst(prefix.count))
    }

    /// The row key of the stream a `$StreamDeleted` event deleted whole, when the stream has
    /// `prefix`: the row a projection keyed by stream drops. Nil for any other event (a trim by
    /// retention, which rebuilds the projection instead).
    public static func deletedRowKey(_ event: RecordedEvent, prefix: String) -> RowKey? {
        guard let deletion = StreamDeletion(event), deletion.removesTheStream else { return nil }
        return rowKey(of: deletion.stream, prefix: prefix)
    }
}
