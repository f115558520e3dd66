import EventStore
import Foundation
import WireFormat

/// The one line an event is printed as, by `read`, `replay` and `subscribe` alike.
public enum EventLines {
    /// `--json`: `EventJSON.line(_:)`.
    public static func json(_ event: RecordedEvent) -> String { EventJSON.line(event) }

    /// For people: `POSITION  STREAM@VERSION  TYPE  RECORDED-AT  DATA`, two spaces apart.
    static func text(_ event: RecordedEvent) -> String {
        let data = JSONWriter.embeddable(event.data) ?? "base64:" + event.data.base64EncodedString()
        return "\(event.position)  \(event.stream)@\(event.version)  \(event.type)  \(ISO8601.string(microseconds: event.recordedAtMicroseconds))  \(data)"
    }

}
