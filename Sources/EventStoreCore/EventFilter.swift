#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which events a read or subscription wants: any combination of one stream, a category, a
/// stream-name prefix and a set of event types. An empty filter matches every event.
///
/// A stream's **category** is the part of its name before the first `-` (the whole name when it
/// has none), as in KurrentDB and Message DB: `todo-home` and `todo-homework` are both in the
/// category `todo`, and `EventFilter(category: "todo")` matches both, while
/// `EventFilter(streamPrefix: "todo-home")` matches both too (a raw prefix) and
/// `EventFilter(stream: "todo-home")` only the one.
public struct EventFilter: Sendable, Equatable {
    /// Only events of this stream.
    public var stream: String?
    /// Only events of streams in this category (the part of the name before the first `-`).
    /// One trailing `-` is ignored (`"orders-"` is the category `orders`); a category with a `-`
    /// inside matches no stream.
    public var category: String? {
        didSet { category = category.map(Self.normalizedCategory) }
    }
    /// Only events whose stream name starts with this prefix.
    public var streamPrefix: String?
    /// Only events of these types (nil: any type).
    public var types: Set<String>?

    /// Creates a filter; nil or omitted parts match everything.
    public init(stream: String? = nil, category: String? = nil, streamPrefix: String? = nil, types: Set<String>? = nil) {
        self.stream = stream
        self.category = category.map(Self.normalizedCategory)
        self.streamPrefix = streamPrefix
        self.types = types
    }

    /// Matches every event.
    public static let all = EventFilter()

    /// The category of a stream: the part of its name before the first `-`, or the whole name.
    public static func category(of stream: String) -> Substring {
        stream.utf8.firstIndex(of: UInt8(ascii: "-")).map { stream[..<$0] } ?? stream[...]
    }

    /// A category as given, without one trailing `-`.
    static func normalizedCategory(_ category: String) -> String {
        category.utf8.last == UInt8(ascii: "-") ? String(category.dropLast()) : category
    }

    /// Whether a recorded event passes the filter.
    public func matches(_ event: RecordedEvent) -> Bool {
        guard matches(stream: event.stream) else { return false }
        if let types, !types.contains(event.type) { return false }
        return true
    }

    /// Whether events of `stream` pass the filter's stream, category and prefix (types aside).
    public func matches(stream name: String) -> Bool {
        if let stream, name != stream { return false }
        if let category, Self.category(of: name) != category { return false }
        if let streamPrefix, !name.hasPrefix(streamPrefix) { return false }
        return true
    }

    /// The filter prepared for matching raw records without decoding them.
    @_spi(Records) public var compiled: CompiledFilter { CompiledFilter(self) }
}

/// An ``EventFilter`` in bytes, for testing stored records before copying them out.
@_spi(Records) public struct CompiledFilter {
    // Inlinable: the backends test every record they scan against it.
    @usableFromInline let isEmpty: Bool
    @usableFromInline let stream: [UInt8]?
    @usableFromInline let category: [UInt8]?
    @usableFromInline let streamPrefix: [UInt8]?
    @usableFromInline let types: [[UInt8]]?

    init(_ filter: EventFilter) {
        stream = filter.stream.map { Array($0.utf8) }
        category = filter.category.map { Array($0.utf8) }
        streamPrefix = filter.streamPrefix.map { Array($0.utf8) }
        types = filter.types.map { $0.map { Array($0.utf8) } }
        isEmpty = stream == nil && category == nil && streamPrefix == nil && types == nil
    }

    @inlinable
    public func matches(_ record: RecordView) -> Bool {
        if isEmpty { return true }
        if let stream, !Self.equal(record.streamBytes, stream) { return false }
        if let category {
            // The name is the category, or the category and a '-' (and a category never has one).
            let name = record.streamBytes
            guard !category.contains(UInt8(ascii: "-")), record.streamHasPrefix(category),
                name.count == category.count || name[category.count] == UInt8(ascii: "-")
            else { return false }
        }
        if let streamPrefix, !record.streamHasPrefix(streamPrefix) { return false }
        if let types {
            let type = record.typeBytes
            if !types.contains(where: { Self.equal(type, $0) }) { return false }
        }
        return true
    }

    /// Byte equality by length, then memcmp.
    @inlinable @inline(__always)
    static func equal(_ bytes: UnsafeRawBufferPointer, _ other: [UInt8]) -> Bool {
        guard bytes.count == other.count else { return false }
        return other.withUnsafeBytes { otherBytes in
            guard bytes.count > 0, let base = bytes.baseAddress, let otherBase = otherBytes.baseAddress else { return true }
            return memcmp(base, otherBase, bytes.count) == 0
        }
    }
}
