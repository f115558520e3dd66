import Foundation

/// What an event store offers, whichever database keeps it: the LMDB `EventStore` (embedded,
/// one machine) and `PostgresEventStore` of the EventStorePostgres product (many processes on
/// many hosts) both conform, with the same semantics, limits and error codes, proven by one
/// conformance suite.
///
/// - Positions are global, in commit order and never reused: no reader ever sees position P+1
///   before P. They are gapless but for the holes deletions leave (each recorded by a
///   `$StreamDeleted` event, see ``StreamDeletion``).
/// - Appends are atomic across streams, guarded by expected versions, and idempotent by event id
///   forever: the same ids and content again return the original positions and write nothing.
/// - A subscription delivers the log in position order, catch-up then live, with no gap and no
///   duplicate, including appends made by other processes.
///
/// Errors are ``EventStoreError``s with the codes each method of `EventStore` documents.
/// Requirements take every argument; `EventStore` also offers them with defaults.
///
/// `EventLog` is every role at once. Code that needs less asks for less, so that what it does is
/// plain from its signature and a backend or a test double can offer just that:
///
/// | role | what | who asks for it |
/// |---|---|---|
/// | ``StoreHandle`` | where, how, with what it was opened; closing | every role refines it |
/// | ``LogAppending`` | appends, conditions, tracking positions, writer statistics | command handlers |
/// | ``LogReading`` | reads by query, range, stream, id; subscriptions | everyone who reads |
/// | ``LogTables`` | tables beside the log, in transactions | projections, consumer groups, snapshots |
/// | ``LogMaintenance`` | deletion, retention, purge, stream info | operators (esctl, the server) |
/// | ``LogInspection`` | statistics, verification | operators |
/// | ``LogOwnership`` | who owns long-running work | projection rebuilds |
public protocol EventLog: LogAppending, LogReading, LogTables, LogMaintenance, LogInspection, LogOwnership {}

extension LogAppending {
    /// Appends `events` to `stream` if its version satisfies `expectedVersion`.
    public func append(
        to stream: String, events: [NewEvent], expectedVersion: ExpectedVersion = .any
    ) async throws -> AppendResult {
        let results = try await append([StreamAppend(stream: stream, events: events, expectedVersion: expectedVersion)])
        return results[0]
    }
}
