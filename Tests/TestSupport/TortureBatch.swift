import EventStore
import Foundation

/// The batches the reliability tests' writer appends, made again by the checker from the same
/// numbers: so a checker knows every byte an acknowledged batch must have.
public enum TortureBatch {
    /// The id of event `index` of batch `batch`.
    public static func eventID(seed: UInt64, batch: UInt64, index: Int) -> UUID {
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { raw in
            raw.storeBytes(of: (seed << 32 | batch >> 32).bigEndian, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: (batch << 8 | UInt64(index)).bigEndian, toByteOffset: 8, as: UInt64.self)
        }
        return UUID(uuid: bytes)
    }

    /// The parts of batch `batch`: 1 to 4 events, sometimes over two streams.
    public static func appends(seed: UInt64, batch: UInt64) -> [StreamAppend] {
        let count = Int(batch % 4) + 1
        let events = (0..<count).map { index in
            NewEvent(
                id: eventID(seed: seed, batch: batch, index: index), type: index == 0 ? "First" : "More",
                data: Data("{\"batch\":\(batch),\"index\":\(index),\"pad\":\"\(String(repeating: "p", count: Int(batch % 97)))\"}".utf8),
                metadata: Data("{\"seed\":\(seed)}".utf8))
        }
        let stream = "t-\(batch % 13)"
        if count > 1 && batch % 3 == 0 {
            return [StreamAppend(stream: stream, events: Array(events.prefix(1))), StreamAppend(stream: "t-other-\(batch % 5)", events: Array(events.dropFirst()))]
        }
        return [StreamAppend(stream: stream, events: events)]
    }
}
