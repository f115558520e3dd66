import EventStoreCore
import Foundation
import PostgresNIO

extension PostgresEventStore {
    /// Checks the store's invariants in one snapshot (a repeatable-read transaction): positions
    /// 1...head with no gap but the holes deletions left (each a deleted id's position, as many
    /// as the head row and the `$StreamDeleted` events count), each stream's versions first...n
    /// with no gap and its row in `streams` agreeing, the head row's counts, tracking positions within the log, and every event's
    /// checksum recomputed from its fields. Reads the whole log: a check, not a routine call.
    public func verify() async throws -> VerificationReport {
        try await withConnection { connection in
            let logger = configuration.logger
            try await connection.statement("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
            do {
                let report = try await Self.verify(
                    connection, schemaVersion: schemaVersionExpression(databaseSchemaVersion), tags: tagsExpression(databaseSchemaVersion),
                    binaryData: binaryDataExpression(databaseSchemaVersion), hasDeletions: databaseSchemaVersion >= 4, logger: logger)
                try await connection.statement("COMMIT", logger: logger)
                return report
            } catch {
                _ = try? await connection.statement("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    /// `schemaVersion` reads an event's schema version (see ``schemaVersionExpression(_:)``),
    /// `tags` its tags and `binaryData` its data format, in the database's schema version.
    private static func verify(
        _ connection: PostgresConnection, schemaVersion: String, tags: String, binaryData: String, hasDeletions: Bool, logger: Logger
    ) async throws -> VerificationReport {
        var report = VerificationReport()
        var headPosition: Int64 = 0
        var streamTotal: Int64 = 0
        var deleted: Int64 = 0
        let deletedColumn = hasDeletions ? "deleted" : "0::bigint"
        for try await (position, streams, removed) in try await connection.statement(
            PostgresQuery(unsafeSQL: "SELECT position, streams, \(deletedColumn) FROM eventstore.head"), logger: logger
        ).decode((Int64, Int64, Int64).self) {
            headPosition = position
            streamTotal = streams
            deleted = removed
        }
        report.headPosition = UInt64(max(headPosition, 0))

        // Positions: 1...head, no event past the head, and no gap but the holes of deleted events
        // (each one a deleted id's position).
        for try await (count, high) in try await connection.statement(
            "SELECT count(*), coalesce(max(position), 0) FROM eventstore.events", logger: logger
        ).decode((Int64, Int64).self) {
            report.events = UInt64(max(count, 0))
            if high != headPosition {
                report.add("head", "the head row says \(headPosition) but the last event is at \(high)")
            }
            if count + deleted != high {
                report.add("positions", "\(count) events and \(deleted) deleted ones hold positions 1...\(high): the log has a gap")
            }
        }
        let explained = hasDeletions
            ? "(SELECT count(*) FROM eventstore.deleted_ids d WHERE d.position > p.position AND d.position < p.next)" : "0"
        for try await (after, next) in try await connection.statement(
            PostgresQuery(
                unsafeSQL: """
                    SELECT position, next FROM (
                        SELECT position, lead(position) OVER (ORDER BY position) AS next
                        FROM (SELECT 0::bigint AS position UNION ALL SELECT position FROM eventstore.events) e) p
                    WHERE next <> position + 1 AND \(explained) <> next - position - 1
                    LIMIT \(Int64(VerificationReport.maximumProblems))
                    """), logger: logger
        ).decode((Int64, Int64).self) {
            report.add("positions", "a gap after position \(after): the next event is at \(next), and no deletion explains it")
        }
        if hasDeletions {
            for try await (ids, live, recorded) in try await connection.statement(
                """
                SELECT (SELECT count(*) FROM eventstore.deleted_ids),
                    (SELECT count(*) FROM eventstore.deleted_ids d JOIN eventstore.events e ON e.position = d.position OR e.id = d.id),
                    (SELECT coalesce(sum(greatest((convert_from(data, 'UTF8')::jsonb->>'toVersion')::bigint
                        - (convert_from(data, 'UTF8')::jsonb->>'fromVersion')::bigint + 1, 0)), 0)::bigint
                     FROM eventstore.events WHERE stream = '$deletions' AND type = '$StreamDeleted')
                """, logger: logger
            ).decode((Int64, Int64, Int64).self) {
                if ids != deleted {
                    report.add("ids", "the head row counts \(deleted) deleted events but \(ids) deleted ids are kept")
                }
                if live > 0 {
                    report.add("ids", "\(live) deleted ids name an event that is still in the log")
                }
                if recorded != deleted {
                    report.add("deletions", "the $StreamDeleted events record \(recorded) deleted events, the head row counts \(deleted)")
                }
            }
        }

        // Streams: each stream's versions are first...n with no gap and its row says n.
        var streamCount: Int64 = 0
        let firstColumn = hasDeletions ? "coalesce(s.first_version, 1)" : "1::bigint"
        for try await (name, events, lowest, highest, recorded, first) in try await connection.statement(
            PostgresQuery(
                unsafeSQL: """
                    SELECT coalesce(e.stream, s.name), coalesce(e.events, 0), coalesce(e.lowest, 0), coalesce(e.highest, 0),
                        coalesce(s.version, 0), \(firstColumn)
                    FROM (SELECT stream, count(*) AS events, min(version) AS lowest, max(version) AS highest
                          FROM eventstore.events GROUP BY stream) e
                    FULL JOIN eventstore.streams s ON s.name = e.stream
                    """), logger: logger
        ).decode((String, Int64, Int64, Int64, Int64, Int64).self) {
            streamCount += 1
            if events > 0 && (events != highest - lowest + 1 || lowest != first) {
                report.add("versions", "the stream '\(name)' has \(events) events with versions \(lowest)...\(highest), its first kept version is \(first)")
            }
            if events > 0 && recorded != highest {
                report.add("streams", "the stream '\(name)' is recorded at version \(recorded) but its last event has version \(highest)")
            }
            if events == 0 && first <= recorded {
                report.add("streams", "the stream '\(name)' is recorded at version \(recorded) from version \(first) but has no events")
            }
        }
        report.streams = UInt64(max(streamCount, 0))
        if streamCount != streamTotal {
            report.add("head", "the head row counts \(streamTotal) streams but \(streamCount) exist")
        }

        // Tracking positions are not checked against the head: an upstream source's position
        // (TrackingPosition.isUpstream, schema version 6) is another log's, and the table does
        // not tell the two kinds apart (LMDB's verify never checked them either).

        // The tag rows (schema version 5): one per tag of each event, and no other.
        if tags != "'{}'::text[]" {
            for try await (missing, extra) in try await connection.statement(
                """
                SELECT (SELECT count(*) FROM eventstore.events e, unnest(e.tags) AS t(tag)
                        WHERE NOT EXISTS (SELECT FROM eventstore.event_tags g WHERE g.tag = t.tag AND g.position = e.position)),
                       (SELECT count(*) FROM eventstore.event_tags g
                        WHERE NOT EXISTS (SELECT FROM eventstore.events e WHERE e.position = g.position AND g.tag = ANY(e.tags)))
                """, logger: logger
            ).decode((Int64, Int64).self) {
                if missing > 0 { report.add("tags", "\(missing) tags of events have no row in event_tags: queries miss those events") }
                if extra > 0 { report.add("tags", "event_tags holds \(extra) rows no event's tags back") }
            }
        }

        // Checksums, recomputed from every event's fields.
        for try await (position, stream, id, type, recordedAt, data, metadata, checksum, schemaVersion, eventTags, binary) in try await connection.statement(
            PostgresQuery(
                unsafeSQL:
                    "SELECT position, stream, id, type, recorded_at, data, metadata, checksum, \(schemaVersion), \(tags), \(binaryData) FROM eventstore.events ORDER BY position"),
            logger: logger
        ).decode((Int64, String, UUID, String, Int64, ByteBuffer, ByteBuffer, Int32, Int32, [String], Bool).self) {
            let expected = ContentChecksum.of(
                stream: stream, type: type, recordedAt: recordedAt, id: id, data: Data(data.readableBytesView),
                metadata: Data(metadata.readableBytesView), schemaVersion: UInt16(clamping: schemaVersion), tags: eventTags,
                dataFormat: binary ? .binary : .json)
            if expected != checksum {
                report.add("checksum", "the event at position \(position) does not match its checksum: its fields changed after it was written")
            }
        }
        return report
    }
}
