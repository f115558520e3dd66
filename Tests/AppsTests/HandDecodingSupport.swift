@testable import Apps
import EventStoreCore
import Foundation
import Testing

/// The id of every event these checks make.
private let sampleID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0x70, 0, 0x80, 0, 0, 0, 0, 0, 0, 1))

private func recorded(_ type: String, _ data: Data, stream: String, position: UInt64) -> RecordedEvent {
    RecordedEvent(position: position, stream: stream, version: 1, id: sampleID, type: type, data: data, metadata: Data(), recordedAtMicroseconds: 1_000)
}

/// Expects the hand-written decoder of `E` (`E(view:)`) to agree with its `Decodable` one
/// (`E(recorded:)`) on every sample: the same value, or the same error.
func expectDecodedAlike<E: HandDecodedEvent & Equatable>(
    _: E.Type, stream: String, _ samples: [(type: String, data: String)], sourceLocation: SourceLocation = #_sourceLocation
) throws {
    for (index, sample) in samples.enumerated() {
        // Given the event as recorded
        let event = recorded(sample.type, Data(sample.data.utf8), stream: stream, position: UInt64(index + 1))
        // When both decoders read it
        let expected = Result { () throws(EventDecodingError) in try E(recorded: event) }
        let byHand = try EventView.withView(of: event) { view in Result { () throws(EventDecodingError) in try E(view: view) } }
        // Then they agree
        #expect(byHand == expected, "\(sample.type) \(sample.data)", sourceLocation: sourceLocation)
    }
}

/// Expects each event, as `newEvent()` records it, to be taken by the hand-written path (not
/// left to `Decodable`) and decoded to itself.
func expectTakenByHand<E: HandDecodedEvent & Equatable>(_ events: [E], stream: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    for event in events {
        let new = try event.newEvent()
        let byHand = try EventView.withView(of: recorded(new.type, new.data, stream: stream, position: 1)) { E.decodedByHand($0) }
        #expect(byHand == event, "\(new.type) \(String(decoding: new.data, as: UTF8.self))", sourceLocation: sourceLocation)
    }
}

extension Result where Failure == EventDecodingError {
    init(_ body: () throws(EventDecodingError) -> Success) {
        do { self = .success(try body()) } catch { self = .failure(error) }
    }
}
