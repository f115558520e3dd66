import Foundation
import Projections

// The chat's row encodings, written by hand: the same bytes their `Codable` conformances give
// (fields in declaration order; a UUID as its 16 bytes, an optional with its marker), without the
// generic `Codable` machinery, which a rebuild of the messages paid for every row it wrote.
// `ChatRowTests` holds each against its `Codable` encoding.

extension ChatMessage {
    public func encode(to writer: inout RowWriter) {
        withUnsafeBytes(of: id.uuid) { writer.write(bytes: $0) }
        writer.write(user)
        writer.write(text)
        writer.write(date)
    }

    public init(from reader: inout RowReader) throws(RowDecodingError) {
        let id = try reader.readBytes()
        guard id.count == 16 else { throw RowDecodingError("a UUID is not 16 bytes") }
        self.init(
            id: UUID(uuid: (id[0], id[1], id[2], id[3], id[4], id[5], id[6], id[7], id[8], id[9], id[10], id[11], id[12], id[13], id[14], id[15])),
            user: try reader.read(String?.self), text: try reader.read(String.self), date: try reader.read(Int64.self))
    }
}

extension LastSeen {
    public func encode(to writer: inout RowWriter) {
        writer.write(at)
        writer.write(isAway)
    }

    public init(from reader: inout RowReader) throws(RowDecodingError) {
        self.init(at: try reader.read(Int64.self), isAway: try reader.read(Bool.self))
    }
}
