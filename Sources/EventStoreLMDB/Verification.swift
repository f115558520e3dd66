@_spi(Records) import EventStoreCore
import CLMDB
import Foundation

extension EventStore {
    /// Checks the log against its indexes in one read snapshot: positions run 1...head with no
    /// gap; every record decodes and matches its checksum (records written before checksums are
    /// counted in ``VerificationReport/uncheckedRecords``); each stream's records have versions 1, 2, ... in position
    /// order; every stream head matches its records; every stream-index entry points to a record
    /// of that stream and version and every record is indexed; the id table maps each record's
    /// id to its position and holds nothing else. Returns every problem found (it does not stop at
    /// the first); throws only when the store cannot be read at all.
    public func verify() throws -> VerificationReport {
        let databases = environment.databases
        return try environment.read { txn in
            var report = VerificationReport()
            try Self.verifyMeta(txn, databases, &report)
            let log = try Self.verifyLog(txn, databases, &report)
            try Self.verifyHeadsAndIndex(txn, databases, log.streams, undecodable: log.undecodable, &report)
            try Self.verifyIDs(txn, databases, log.holeCount, &report)
            try Self.verifyHoles(txn, databases, log, &report)
            try Self.verifyQueryIndexes(txn, databases, &report)
            return report
        }
    }

    /// What the log scan learned of each stream, by name.
    private struct SeenStream {
        /// The first version seen (versions before it were deleted, or did not decode).
        var first: UInt64 = 1
        var count: UInt64 = 0
        /// The position of each version, in order (index = version - first).
        var positions: [UInt64] = []

        /// The position seen for `version`; nil when it was not seen (0 when it did not decode).
        func position(of version: UInt64) -> UInt64? {
            guard version >= first, version - first < UInt64(positions.count) else { return nil }
            return positions[Int(version - first)]
        }
    }

    /// What the log scan learned: each stream, the records that did not decode, the holes.
    private struct LogScan {
        var streams: [String: SeenStream] = [:]
        var undecodable: UInt64 = 0
        /// The missing positions, as ranges; each must be a deleted event's.
        var holes: [ClosedRange<UInt64>] = []
        /// How many positions are missing.
        var holeCount: UInt64 { holes.reduce(0) { $0 + ($1.upperBound - $1.lowerBound + 1) } }
        /// The deletions the `$StreamDeleted` events record: the events they count.
        var recordedDeletions: UInt64 = 0
    }

    /// The tag and type indexes (a store that has them): every entry names a record of that type
    /// or carrying that tag, and every record's type and tags have their entry.
    private static func verifyQueryIndexes(_ txn: Transaction, _ databases: Databases, _ report: inout VerificationReport) throws {
        guard let tagIndex = databases.tagIndex, let typeIndex = databases.typeIndex else { return }
        // Records that do not decode are reported by the log's check; their tags cannot be told.
        var records = 0
        var tags = 0
        var undecodable = false
        let log = try txn.cursor(databases.events)
        var entry = try log.first()
        while let (key, value) = entry {
            records += 1
            if key.count == 8, let record = try? RecordView(value, position: BigEndian.uint64(key)) {
                tags += record.tags.count
            } else {
                undecodable = true
            }
            entry = try log.next()
        }
        for (name, dbi, expected) in [("type index", typeIndex, records), ("tag index", tagIndex, undecodable ? -1 : tags)] {
            var entries = 0
            let cursor = try txn.cursor(dbi)
            var item = try cursor.first()
            while let (key, value) = item {
                entries += 1
                let position = value.count == 8 ? BigEndian.uint64(value) : 0
                let stored = try BigEndian.withBytes(of: position) { try txn.get(databases.events, $0) }
                let record = stored.flatMap { try? RecordView($0, position: position) }
                let agrees =
                    (stored != nil && record == nil)
                    || (dbi == typeIndex ? record?.typeBytes.elementsEqual(key) == true : record?.hasTag(key) == true)
                if !agrees {
                    report.add("query indexes", "the \(name) lists position \(position) under '\(String(decoding: key, as: UTF8.self))', which that record does not have")
                }
                item = try cursor.next()
            }
            if expected >= 0, entries != expected {
                report.add("query indexes", "the \(name) holds \(entries) entries, the records need \(expected)")
            }
        }
    }

    private static func verifyMeta(_ txn: Transaction, _ databases: Databases, _ report: inout VerificationReport) throws {
        let format = try Array(Schema.formatKey.utf8).withUnsafeBytes { try txn.get(databases.meta, $0) }
        guard let format, format.count == 4, Schema.readableFormats.contains(BigEndian.uint32(format)) else {
            report.add("meta", "the format marker is missing or not one of \(Schema.readableFormats.map(String.init).joined(separator: ", "))")
            return
        }
    }

    /// Scans the log: contiguous positions, decodable records, versions 1, 2, ... per stream.
    /// Returns what it saw of each stream (a version skipped where a record did not decode has
    /// position 0), and how many records did not decode.
    private static func verifyLog(
        _ txn: Transaction, _ databases: Databases, _ report: inout VerificationReport
    ) throws -> LogScan {
        var scan = LogScan()
        var streams: [String: SeenStream] = [:]
        var undecodable: UInt64 = 0
        var unattributed: UInt64 = 0
        var interner = StringInterner()
        var expected: UInt64 = 1
        let cursor = try txn.cursor(databases.events)
        var entry = try cursor.first()
        while let (key, value) = entry {
            defer { report.events += 1 }
            guard key.count == 8 else {
                report.add("positions", "a key of \(key.count) bytes is not a position")
                entry = try cursor.next()
                continue
            }
            let position = BigEndian.uint64(key)
            if position > expected {
                // A hole, which a deletion must explain (checked with the id table).
                scan.holes.append(expected...(position - 1))
            } else if position < expected {
                report.add("positions", "position \(position) is out of order")
            }
            expected = position + 1
            report.headPosition = position
            do {
                let view = try RecordView(value, position: position)
                if !view.isChecked { report.uncheckedRecords += 1 }
                let event = try view.recordedEvent(at: position, interner: &interner)
                if event.stream == StreamDeletion.systemStream, let deletion = StreamDeletion(event) {
                    scan.recordedDeletions &+= deletion.count
                }
                // A stream's first record may come after deleted versions.
                var seen = streams[event.stream] ?? SeenStream(first: event.version)
                // Versions skipped here may be records that did not decode (whose stream no one
                // can tell): as many as there are of those are not reported again.
                let nextVersion = seen.first &+ seen.count
                let skipped = event.version > nextVersion ? event.version - nextVersion : 0
                if skipped > 0, skipped <= unattributed {
                    unattributed -= skipped
                    seen.count += skipped
                    seen.positions.append(contentsOf: repeatElement(0, count: Int(skipped)))
                }
                seen.count += 1
                if event.version != seen.first &+ seen.count &- 1 {
                    report.add(
                        "versions",
                        "position \(position) is version \(event.version) of '\(event.stream)', expected version \(seen.first &+ seen.count &- 1)")
                }
                seen.positions.append(position)
                streams[event.stream] = seen
            } catch {
                undecodable += 1
                unattributed += 1
                // The record's own words, without the advice to run verify (this is verify).
                let reason = error.message.split(separator: ";").first.map(String.init) ?? error.message
                let note = undecodable == 1 ? " (its stream cannot be told: the checks of heads and the index allow for it)" : ""
                report.add("records", "position \(position) does not decode: \(reason.prefix(1).lowercased() + reason.dropFirst())\(note)")
            }
            entry = try cursor.next()
        }
        scan.streams = streams
        scan.undecodable = undecodable
        return scan
    }

    /// Checks each stream head against the records seen, and the index against both. Records
    /// that did not decode belong to a stream no one can tell: a head that counts at most that
    /// many more versions than the records seen, and index entries of versions whose record was
    /// not seen, are not reported again (that would blame the same record twice, misleadingly).
    private static func verifyHeadsAndIndex(
        _ txn: Transaction, _ databases: Databases, _ seen: [String: SeenStream], undecodable: UInt64,
        _ report: inout VerificationReport
    ) throws {
        var numbers: [UInt64: String] = [:]
        var heads: [String: StreamHead] = [:]
        let cursor = try txn.cursor(databases.streams)
        var entry = try cursor.first()
        while let (key, value) = entry {
            report.streams += 1
            let name = String(decoding: key, as: UTF8.self)
            guard let head = StreamHead(value) else {
                report.add("streams", "the head of '\(name)' does not decode")
                entry = try cursor.next()
                continue
            }
            if let other = numbers[head.number] {
                report.add("streams", "'\(name)' and '\(other)' share the stream number \(head.number)")
            }
            numbers[head.number] = name
            heads[name] = head
            let records = seen[name]?.count ?? 0
            let live = head.liveCount
            if live < records || live - records > undecodable {
                report.add(
                    "streams",
                    "the head of '\(name)' says versions \(head.state.first)...\(head.version), the log holds \(records) of its events")
            } else if let stream = seen[name], records > 0, undecodable == 0, stream.first != head.state.first {
                report.add("streams", "the head of '\(name)' says its first version is \(head.state.first), the log's first is \(stream.first)")
            }
            entry = try cursor.next()
        }
        for (name, stream) in seen where heads[name] == nil {
            report.add("streams", "'\(name)' has \(stream.count) events in the log but no head")
        }
        if !numbers.isEmpty, numbers.keys.max() != UInt64(numbers.count) || numbers.keys.min() != 1 {
            report.add("streams", "stream numbers are not 1...\(numbers.count)")
        }

        // Every indexed position is the record of that stream and version, and nothing is left over.
        let chunk = UInt64(Schema.indexChunk)
        var chunksSeen = 0
        let index = try txn.cursor(databases.streamIndex)
        var indexEntry = try index.first()
        while let (key, value) = indexEntry {
            chunksSeen += 1
            guard key.count == 16, value.count == 8 * Schema.indexChunk else {
                report.add("index", "an entry has a \(key.count)-byte key and a \(value.count)-byte value")
                indexEntry = try index.next()
                continue
            }
            let number = BigEndian.uint64(key)
            let first = BigEndian.uint64(key, at: 8)
            guard let name = numbers[number], let head = heads[name] else {
                report.add("index", "a chunk belongs to stream number \(number), which has no head")
                indexEntry = try index.next()
                continue
            }
            if first % chunk != 1 || first + chunk - 1 > head.version - UInt64(head.pending.count) {
                report.add("index", "'\(name)' has a chunk from version \(first), beyond its full chunks")
            } else if first + chunk - 1 < head.state.first {
                report.add("index", "'\(name)' has a chunk of versions \(first)...\(first + chunk - 1), which were deleted")
            } else if let stream = seen[name] {
                for offset in 0..<Schema.indexChunk {
                    let version = first + UInt64(offset)
                    let position = BigEndian.uint64(value, at: 8 * offset)
                    if let seenAt = stream.position(of: version), seenAt != 0, seenAt != position {
                        report.add("index", "version \(version) of '\(name)' points to position \(position), the record is at \(seenAt)")
                    }
                }
            }
            indexEntry = try index.next()
        }
        var expectedChunks = 0
        for (name, head) in heads {
            // Full chunks that held only deleted versions are gone.
            let full = (head.version - UInt64(head.pending.count)) / chunk
            let deletedChunks = min((head.state.first - 1) / chunk, full)
            expectedChunks += Int(full - deletedChunks)
            guard let stream = seen[name] else { continue }
            for (offset, position) in head.pending.enumerated() {
                let version = head.firstPendingVersion + UInt64(offset)
                if let seenAt = stream.position(of: version), seenAt != 0, seenAt != position {
                    report.add("index", "version \(version) of '\(name)' (in its head) points to position \(position), the record is at \(seenAt)")
                }
            }
        }
        if chunksSeen != expectedChunks {
            report.add("index", "the index holds \(chunksSeen) chunks, the heads need \(expectedChunks): some records are not indexed")
        }
    }

    /// Checks the id table: each record's id maps to its position, and the table holds no other
    /// but the ids of deleted events, one per hole.
    private static func verifyIDs(
        _ txn: Transaction, _ databases: Databases, _ holeCount: UInt64, _ report: inout VerificationReport
    ) throws {
        let ids = try txn.entryCount(databases.eventIDs)
        if UInt64(ids) != report.events + holeCount {
            let deleted = holeCount > 0 ? " and \(holeCount) deleted ones" : ""
            report.add("ids", "the id table holds \(ids) ids for \(report.events) records\(deleted)")
        }
        let cursor = try txn.cursor(databases.events)
        var entry = try cursor.first()
        while let (key, value) = entry {
            if key.count == 8, value.count >= RecordCodec.headerSize {
                let position = BigEndian.uint64(key)
                let id = UnsafeRawBufferPointer(rebasing: value[24..<40])
                let stored = try txn.get(databases.eventIDs, id)
                if stored == nil {
                    report.add("ids", "the id of position \(position) is not in the id table")
                } else if let stored, stored.count != 8 || BigEndian.uint64(stored) != position {
                    report.add("ids", "the id of position \(position) points elsewhere in the id table")
                }
            }
            entry = try cursor.next()
        }
    }

    /// Whether `position` is in one of `holes` (ascending, disjoint): a binary search.
    private static func isHole(_ position: UInt64, _ holes: [ClosedRange<UInt64>]) -> Bool {
        var low = 0
        var high = holes.count
        while low < high {
            let middle = (low + high) / 2
            if holes[middle].upperBound < position { low = middle + 1 } else { high = middle }
        }
        return low < holes.count && holes[low].contains(position)
    }

    /// Checks the holes against the deletions' own records: each is the position of a deleted
    /// event's id, and the `meta` counter and the `$StreamDeleted` events both count them. Holes
    /// they do not explain are reported as missing positions.
    private static func verifyHoles(_ txn: Transaction, _ databases: Databases, _ scan: LogScan, _ report: inout VerificationReport) throws {
        let holes = scan.holeCount
        let counted = try MetaCounters.value(Schema.deletedCountKey, txn, databases)
        var explained = Set<UInt64>()
        if holes > 0 {
            let cursor = try txn.cursor(databases.eventIDs)
            var entry = try cursor.first()
            while let (_, value) = entry {
                if value.count == 8, isHole(BigEndian.uint64(value), scan.holes) { explained.insert(BigEndian.uint64(value)) }
                entry = try cursor.next()
            }
        }
        let countsAgree = counted == holes && scan.recordedDeletions == holes
        for range in scan.holes where !countsAgree || !range.allSatisfy({ explained.contains($0) }) {
            report.add("positions", "positions \(range.lowerBound)...\(range.upperBound) are missing")
        }
        if counted != holes {
            report.add("deletions", "the store counts \(counted) deleted events, the log has \(holes) holes")
        }
        if scan.recordedDeletions != holes {
            report.add("deletions", "the $StreamDeleted events record \(scan.recordedDeletions) deleted events, the log has \(holes) holes")
        }
    }
}
