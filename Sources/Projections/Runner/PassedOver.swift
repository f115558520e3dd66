import EventStoreCore
import Foundation

/// The events a projection passed over instead of applying them: by its ``ProjectionErrorPolicy/skip``
/// policy, or by an operator's decision (``ProjectionRunner/passOver(_:position:reason:)``). They
/// are part of its state, in a table of the runner's own beside the projection's tables
/// (`_skipped`: position → reason), so a rebuild makes the same choices and the state hash
/// covers them.
public enum PassedOver {
    /// The runner's table of a projection's passed-over events.
    public static let table = "_skipped"

    /// The stream that holds operators' decisions to pass over an event: a stream of the store's
    /// own, so decisions are facts of the log that exports carry and rebuilds replay.
    public static let decisionsStream = "$projections"

    /// The type of a decision event.
    public static let decisionType = "EventPassedOver"

    /// A decision to pass over one event in one projection.
    public struct Decision: EventData, Equatable {
        public static let eventType = PassedOver.decisionType
        /// The projection that passes over the event.
        public var projection: String
        /// The event's id (positions differ in a copy of the log; ids do not).
        public var eventId: UUID
        /// Where the event was when the decision was made.
        public var position: UInt64
        /// Why, in the operator's words.
        public var reason: String

        public init(projection: String, eventId: UUID, position: UInt64, reason: String) {
            self.projection = projection
            self.eventId = eventId
            self.position = position
            self.reason = reason
        }
    }

    /// One passed-over event, as the projection's table records it.
    public struct Entry: Sendable, Equatable {
        public let position: UInt64
        public let reason: String
    }

    /// The decisions recorded for `projection`, by event id.
    static func decisions(for projection: String, in txn: TableTransaction) async throws -> [UUID: Decision] {
        var found: [UUID: Decision] = [:]
        try await txn.forEachEvent(inStream: decisionsStream) { event in
            guard event.type == decisionType, let decision = try? Decision(recorded: event), decision.projection == projection else { return }
            found[decision.eventId] = decision
        }
        return found
    }

    /// The decisions recorded for `projection`, read from the store.
    static func decisions(for projection: String, in store: any ProjectionStore) async throws -> [UUID: Decision] {
        var found: [UUID: Decision] = [:]
        for event in try await store.readStream(decisionsStream, from: nil, direction: .forward, limit: .max) where event.type == decisionType {
            guard let decision = try? Decision(recorded: event), decision.projection == projection else { continue }
            found[decision.eventId] = decision
        }
        return found
    }

    /// The key of a passed-over event's row.
    static func key(_ position: UInt64) -> RowKey { RowKey().appending(position) }
}
