import EventStore
import Foundation
import PostgresNIO

extension PostgresEventStore {
    /// Checks the store's invariants in one snapshot (a repeatable-read transaction): positions
    /// 1...head with no gap, each stream's versions 1...n with no gap and its row in `streams`
    /// agreeing, the head row's counts, tracking positions within the log, and every event's
    /// checksum recomputed from its fields. Reads the whole log: a check, not a routine call.
    public func verify() async throws -> VerificationReport {
        try await withConnection { connection in
            let logger = configuration.logger
            try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
            do {
                let report = try await Self.verify(
                    connection, schemaVersion: schemaVersionExpression(databaseSchemaVersion), logger: logger)
                try await connection.query("COMMIT", logger: logger)
                return report
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    /// `schemaVersion` reads an event's schema version (see ``schemaVersionExpression(_:)``).
    private static func verify(_ connection: PostgresConnection, schemaVersion: String, logger: Logger) async throws -> VerificationReport {
        var report = VerificationReport()
        var headPosition: Int64 = 0
        var streamTotal: Int64 = 0
        for try await (position, streams) in try await connection.query(
            "SELECT position, streams FROM eventstore.head", logger: logger
        ).decode((Int64, Int64).self) {
            headPosition = position
            streamTotal = streams
        }
        report.headPosition = UInt64(max(headPosition, 0))

        // Positions: 1...head, no gap, no event past the head.
        for try await (count, low, high) in try await connection.query(
            "SELECT count(*), coalesce(min(position), 0), coalesce(max(position), 0) FROM eventstore.events", logger: logger
        ).decode((Int64, Int64, Int64).self) {
            report.events = UInt64(max(count, 0))
            if high != headPosition {
                report.add("head", "the head row says \(headPosition) but the last event is at \(high)")
            }
            if count != high || (count > 0 && low != 1) {
                report.add("positions", "\(count) events hold positions \(low)...\(high): the log has a gap")
            }
        }
        for try await (after, next) in try await connection.query(
            """
            SELECT position, next FROM (
                SELECT position, lead(position) OVER (ORDER BY position) AS next FROM eventstore.events) p
            WHERE next <> position + 1 LIMIT \(Int64(VerificationReport.maximumProblems))
            """, logger: logger
        ).decode((Int64, Int64).self) {
            report.add("positions", "a gap after position \(after): the next event is at \(next)")
        }

        // Streams: each stream's versions are 1...n and its row says n.
        var streamCount: Int64 = 0
        for try await (name, events, lowest, highest, recorded) in try await connection.query(
            """
            SELECT coalesce(e.stream, s.name), coalesce(e.events, 0), coalesce(e.lowest, 0), coalesce(e.highest, 0), coalesce(s.version, 0)
            FROM (SELECT stream, count(*) AS events, min(version) AS lowest, max(version) AS highest
                  FROM eventstore.events GROUP BY stream) e
            FULL JOIN eventstore.streams s ON s.name = e.stream
            """, logger: logger
        ).decode((String, Int64, Int64, Int64, Int64).self) {
            streamCount += 1
            if events != highest || (events > 0 && lowest != 1) {
                report.add("versions", "the stream '\(name)' has \(events) events with versions \(lowest)...\(highest)")
            }
            if recorded != highest {
                report.add("streams", "the stream '\(name)' is recorded at version \(recorded) but its last event has version \(highest)")
            }
        }
        report.streams = UInt64(max(streamCount, 0))
        if streamCount != streamTotal {
            report.add("head", "the head row counts \(streamTotal) streams but \(streamCount) exist")
        }

        // Tracking positions name events that exist.
        for try await (name, position) in try await connection.query(
            "SELECT name, position FROM eventstore.tracking WHERE position > \(headPosition)", logger: logger
        ).decode((String, Int64).self) {
            report.add("tracking", "'\(name)' has recorded position \(position), beyond the head \(headPosition)")
        }

        // Checksums, recomputed from every event's fields.
        for try await (position, stream, id, type, recordedAt, data, metadata, checksum, schemaVersion) in try await connection.query(
            PostgresQuery(
                unsafeSQL:
                    "SELECT position, stream, id, type, recorded_at, data, metadata, checksum, \(schemaVersion) FROM eventstore.events ORDER BY position"),
            logger: logger
        ).decode((Int64, String, UUID, String, Int64, ByteBuffer, ByteBuffer, Int32, Int32).self) {
            let expected = ContentChecksum.of(
                stream: stream, type: type, recordedAt: recordedAt, id: id, data: Data(data.readableBytesView),
                metadata: Data(metadata.readableBytesView), schemaVersion: UInt16(clamping: schemaVersion))
            if expected != checksum {
                report.add("checksum", "the event at position \(position) does not match its checksum: its fields changed after it was written")
            }
        }
        return report
    }
}
