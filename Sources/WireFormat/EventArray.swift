import EventStoreCore
import Foundation

/// A JSON array of events for one stream, `[{"type":T,"data":JSON?,"id":UUID?,"metadata":JSON?}, ...]`,
/// as the server's `POST /streams/{stream}` takes it. Each element is read exactly as a line of
/// ``EventLine`` (the same members, encodings, limits and sentences), except that the stream is
/// the caller's: an element may repeat it but name no other, and gives no expected version.
public enum EventArray {
    /// The events of `body` for `stream`, in order, their data and metadata byte for byte as
    /// given. Throws ``WireFormatError`` with ``WireFormatError/Code/invalidEvent`` naming the
    /// element and what is wrong, ``WireFormatError/Code/invalidBatch`` for a body that is not an
    /// array, an empty one, one over the store's limit on events per append, or an id given twice.
    public static func events(_ body: [UInt8], stream: String) throws(WireFormatError) -> [NewEvent] {
        let elements: [Range<Int>]
        do {
            elements = try JSONScanner.elements(ofArray: body)
        } catch {
            throw WireFormatError(
                .invalidBatch, "The body is not a JSON array of events (\(error)); send [{\"type\":T,\"data\":{...}}, ...]. Nothing was written.")
        }
        guard !elements.isEmpty else {
            throw WireFormatError(.invalidBatch, "The array holds no events; give at least one {\"type\":T,\"data\":{...}}.")
        }
        guard elements.count <= Limits.maximumEventsPerAppend else {
            throw WireFormatError(
                .invalidBatch,
                "The array has \(elements.count) events, more than the \(Limits.maximumEventsPerAppend) one append takes; split it. Nothing was written.")
        }
        var events: [NewEvent] = []
        var idNumbers: [UUID: Int] = [:]
        for (index, range) in elements.enumerated() {
            let number = index + 1
            let event = try EventLine(object: Array(body[range]), number: number, stream: stream).event
            if let id = event.id {
                if let first = idNumbers[id] {
                    throw WireFormatError(
                        .invalidBatch,
                        "Event \(number) repeats the id \(id.lowercasedString) of event \(first): give each event its own id; nothing was written.",
                        line: number)
                }
                idNumbers[id] = number
            }
            events.append(event)
        }
        return events
    }
}
