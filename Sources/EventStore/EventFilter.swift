#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which events a read or subscription wants: any combination of one stream, a category (a
/// stream-name prefix) and a set of event types. An empty filter matches every event.
public struct EventFilter: Sendable, Equatable {
    /// Only events of this stream.
    public var stream: String?
    /// Only events whose stream name starts with this prefix (for example `"fitness-"`).
    public var category: String?
    /// Only events of these types (nil: any type).
    public var types: Set<String>?

    /// Creates a filter; nil or omitted parts match everything.
    public init(stream: String? = nil, category: String? = nil, types: Set<String>? = nil) {
        self.stream = stream
        self.category = category
        self.types = types
    }

    /// Matches every event.
    public static let all = EventFilter()

    /// Whether a recorded event passes the filter.
    public func matches(_ event: RecordedEvent) -> Bool {
        if let stream, event.stream != stream { return false }
        if let category, !event.stream.hasPrefix(category) { return false }
        if let types, !types.contains(event.type) { return false }
        return true
    }

    /// The filter prepared for matching raw records without decoding them.
    var compiled: CompiledFilter { CompiledFilter(self) }
}

/// An ``EventFilter`` in bytes, for testing stored records before copying them out.
struct CompiledFilter {
    let isEmpty: Bool
    private let stream: [UInt8]?
    private let category: [UInt8]?
    private let types: [[UInt8]]?

    init(_ filter: EventFilter) {
        stream = filter.stream.map { Array($0.utf8) }
        category = filter.category.map { Array($0.utf8) }
        types = filter.types.map { $0.map { Array($0.utf8) } }
        isEmpty = stream == nil && category == nil && types == nil
    }

    func matches(_ record: RecordView) -> Bool {
        if isEmpty { return true }
        if let stream, !Self.equal(record.streamBytes, stream) { return false }
        if let category, !record.streamHasPrefix(category) { return false }
        if let types {
            let type = record.typeBytes
            if !types.contains(where: { Self.equal(type, $0) }) { return false }
        }
        return true
    }

    /// Byte equality by length, then memcmp.
    @inline(__always)
    static func equal(_ bytes: UnsafeRawBufferPointer, _ other: [UInt8]) -> Bool {
        guard bytes.count == other.count else { return false }
        return other.withUnsafeBytes { otherBytes in
            guard bytes.count > 0, let base = bytes.baseAddress, let otherBase = otherBytes.baseAddress else { return true }
            return memcmp(base, otherBase, bytes.count) == 0
        }
    }
}
