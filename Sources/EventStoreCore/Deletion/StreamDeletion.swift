import Foundation

/// One deletion: the versions of a stream removed from the log, by ``LogMaintenance/deleteStream(_:expectedVersion:hard:)``
/// or by its retention policy, and the system event that records it.
///
/// Every deletion commits, in its own transaction, a `$StreamDeleted` event in the stream
/// `$deletions` whose data is this value as JSON (`{"stream","fromVersion","toVersion","hard",
/// "reason","types"}`): the log's own record of its holes, which `verify` checks and projections
/// read.
public struct StreamDeletion: Sendable, Equatable, Codable {
    /// The stream the events were removed from.
    public let stream: String
    /// The first version removed.
    public let fromVersion: UInt64
    /// The last version removed.
    public let toVersion: UInt64
    /// Whether the stream was tombstoned (a hard delete).
    public let hard: Bool
    /// `delete`, or `retention` for a removal by policy.
    public let reason: String
    /// The event types of the removed events, sorted.
    public let types: [String]
    /// The position of the `$StreamDeleted` event (0 in the event's own data).
    public var position: UInt64 = 0

    /// Whether this is a delete of the whole stream (`reason` "delete"), which a projection can
    /// handle by dropping what it held for the stream; a trim by a retention policy removes only
    /// the oldest events, and rebuilds even the projections that handle deletions.
    public var removesTheStream: Bool { reason == Self.delete }

    /// The reason of a delete by command.
    public static let delete = "delete"
    /// The reason of a trim by a retention policy.
    public static let retention = "retention"

    /// How many events were removed.
    public var count: UInt64 { toVersion >= fromVersion ? toVersion - fromVersion + 1 : 0 }

    package init(stream: String, fromVersion: UInt64, toVersion: UInt64, hard: Bool, reason: String, types: [String]) {
        self.stream = stream
        self.fromVersion = fromVersion
        self.toVersion = toVersion
        self.hard = hard
        self.reason = reason
        self.types = types
    }

    private enum CodingKeys: String, CodingKey { case stream, fromVersion, toVersion, hard, reason, types }

    /// The stream every deletion's system event is appended to.
    public static let systemStream = "$deletions"
    /// The type of the system event.
    public static let eventType = "$StreamDeleted"

    /// The system event's data: compact JSON, keys in a fixed order.
    package var eventData: Data {
        let typeList = types.map(JSONWriter.quote).joined(separator: ",")
        let text =
            "{\"stream\":\(JSONWriter.quote(stream)),\"fromVersion\":\(fromVersion),\"toVersion\":\(toVersion),"
            + "\"hard\":\(hard),\"reason\":\(JSONWriter.quote(reason)),\"types\":[\(typeList)]}"
        return Data(text.utf8)
    }

    /// The deletion a `$StreamDeleted` event records; nil for any other event or data.
    public init?(_ event: RecordedEvent) {
        guard event.type == Self.eventType, event.stream == Self.systemStream,
            var decoded = try? JSONDecoder().decode(StreamDeletion.self, from: event.data)
        else { return nil }
        decoded.position = event.position
        self = decoded
    }
}
