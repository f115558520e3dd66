import EventStoreCore
import Foundation
import PostgresNIO

/// A batch of jobs flattened into the arrays the append function takes (1-based indexes, as
/// PostgreSQL arrays count): per job its parts and tracking position, per part its stream and
/// expectation and events, per event its fields and checksum.
struct AppendArguments {
    let now: Int64
    var jobFirstPart: [Int32] = []
    var jobPartCount: [Int32] = []
    var trackingNames: [String] = []
    var trackingPositions: [Int64] = []
    var trackingPrevious: [Int64] = []
    var partStreams: [String] = []
    var partExpected: [Int64] = []
    var partFirstEvent: [Int32] = []
    var partEventCount: [Int32] = []
    var eventIDs: [UUID] = []
    var eventGiven: [Bool] = []
    var eventTypes: [String] = []
    var eventData: [ByteBuffer] = []
    var eventMetadata: [ByteBuffer] = []
    var eventRecordedAt: [Int64] = []
    var eventChecksums: [Int32] = []
    var eventSchemaVersions: [Int32] = []
    /// Whether each event's data is binary (``DataFormat/binary``).
    var eventBinary: [Bool] = []
    /// Whether each job's tracking position is of an upstream source (not bounded by the head).
    var trackingUpstream: [Bool] = []
    /// Each event's tags, as a slice of `tagValues` (1-based first index, count; 0 for none).
    var eventTagFirst: [Int32] = []
    var eventTagCount: [Int32] = []
    var tagValues: [String] = []

    init(now: Int64) {
        self.now = now
    }

    /// The 0-based index of a job's first part among all parts.
    func firstPart(ofJob job: Int) -> Int { Int(jobFirstPart[job]) - 1 }

    /// The id of the event at a 0-based index among all events.
    func eventID(at index: Int) -> UUID? { eventIDs.indices.contains(index) ? eventIDs[index] : nil }

    mutating func add(_ job: AppendRequest) {
        jobFirstPart.append(Int32(clamping: partStreams.count + 1))
        jobPartCount.append(Int32(clamping: job.appends.count))
        trackingNames.append(job.tracking?.name ?? "")
        trackingPositions.append(Int64(clamping: job.tracking?.position ?? 0))
        trackingPrevious.append(job.tracking?.previous.map { Int64(clamping: $0) } ?? -1)
        trackingUpstream.append(job.tracking?.isUpstream ?? false)
        for (append, ids) in zip(job.appends, job.ids) {
            partStreams.append(append.stream)
            partExpected.append(Self.code(of: append.expectedVersion))
            partFirstEvent.append(Int32(clamping: eventIDs.count + 1))
            partEventCount.append(Int32(clamping: append.events.count))
            for (event, id) in zip(append.events, ids) {
                let recordedAt = event.recordedAtMicroseconds ?? now
                eventIDs.append(id)
                eventGiven.append(event.id != nil)
                eventTypes.append(event.type)
                eventData.append(ByteBuffer(bytes: event.data))
                eventMetadata.append(ByteBuffer(bytes: event.metadata))
                eventRecordedAt.append(recordedAt)
                eventSchemaVersions.append(Int32(event.schemaVersion))
                eventBinary.append(event.dataFormat == .binary)
                eventTagFirst.append(Int32(clamping: tagValues.count + 1))
                eventTagCount.append(Int32(clamping: event.tags.count))
                tagValues += event.tags
                eventChecksums.append(
                    ContentChecksum.of(
                        stream: append.stream, type: event.type, recordedAt: recordedAt, id: id, data: event.data,
                        metadata: event.metadata, schemaVersion: event.schemaVersion, tags: event.tags, dataFormat: event.dataFormat))
            }
        }
    }

    /// An expectation as the function reads it: -1 any, -2 no stream, -3 an existing stream, a
    /// version otherwise (one beyond any real version when it does not fit, so it never matches).
    static func code(of expected: ExpectedVersion) -> Int64 {
        switch expected {
        case .any: return -1
        case .noStream: return -2
        case .streamExists: return -3
        case let .exact(version): return Int64(clamping: version)
        }
    }
}
