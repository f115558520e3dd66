import EventStore

/// A digest of a sequence of events (FNV-1a over each position and id, in order): two nodes
/// that print the same digest for the same count received the identical sequence.
public struct SequenceDigest: Sendable, Equatable {
    public private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    public init() {}

    public mutating func add(_ event: RecordedEvent) {
        var bytes = withUnsafeBytes(of: event.position.bigEndian) { Array($0) }
        bytes += withUnsafeBytes(of: event.id.uuid) { Array($0) }
        for byte in bytes {
            value ^= UInt64(byte)
            value = value &* 0x0000_0100_0000_01b3
        }
    }

    /// The digest in lower-case hexadecimal, as the nodes print it.
    public var text: String { String(value, radix: 16) }
}
