import EventStoreCore
import Projections

/// What an event does to a projection that keeps one row per stream of a prefix (a user's
/// workout, a user's alert queue): the row of a deleted stream goes, an event of the stream
/// folds into its row.
public enum StreamRowChange<Event> {
    /// The stream was deleted: its row goes.
    case deleted(RowKey)
    /// An event of the stream whose row this key names.
    case event(RowKey, Event)
}

/// The decode and apply of such a projection's typed fast path, written once.
enum StreamRows {
    /// The change an event makes: a deletion of a stream with `prefix`, or an event of such a
    /// stream decoded by hand (``HandDecodedEvent``); nil for another stream. Throws the
    /// event's `EventDecodingError`.
    static func change<Event: HandDecodedEvent>(_ event: EventView, prefix: String, as: Event.Type) throws -> StreamRowChange<Event>? {
        if event.typeUTF8.elementsEqual(StreamDeletion.eventType.utf8) {
            return AppStreams.deletedRowKey(event.recordedEvent(), prefix: prefix).map(StreamRowChange.deleted)
        }
        guard let key = AppStreams.rowKey(ofStream: event.streamUTF8, prefix: prefix) else { return nil }
        return .event(key, try Event(view: event))
    }

    /// Applies `change` to `table`: deletes the row, or folds the event into it (`empty` when
    /// there is none yet) with `fold`.
    static func apply<Event, Row: RowValue>(
        _ change: StreamRowChange<Event>, table: String, to state: inout ProjectionState, empty: Row, _ fold: (inout Row, Event) -> Void
    ) throws {
        switch change {
        case let .deleted(key):
            try state.delete(table, key)
        case let .event(key, event):
            var row = try state.get(table, key, as: Row.self) ?? empty
            fold(&row, event)
            try state.put(table, key, row)
        }
    }
}
