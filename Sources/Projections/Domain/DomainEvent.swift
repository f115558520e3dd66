import EventStore
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An event of one of the apps' domains: a `Codable` value with a stable type name, stored as
/// JSON data. `json` and `init(fields:)` are the store's fast path, reading members straight from
/// the stored bytes; the synthesized `Codable` conformance uses the same keys (a test holds them
/// together).
public protocol DomainEvent: Codable, Sendable, Equatable {
    /// The event's type name in the log. Stable: changing it orphans recorded events.
    static var type: String { get }
    /// The event's data.
    var json: JSONValue { get }
    /// Reads the event from the members of its data object; throws ``DomainDataError`` naming
    /// what is missing or wrong.
    init(fields: EventFields) throws(DomainDataError)
}

extension DomainEvent {
    /// The event ready to append.
    public var newEvent: NewEvent {
        NewEvent(type: Self.type, data: Data(json.serialized.utf8))
    }

    /// Decodes a recorded event of this type.
    public init(_ recorded: RecordedEvent) throws(DomainDataError) {
        try self.init(data: recorded.data)
    }

    /// Decodes the event from its data as a JSON value.
    public init(json: JSONValue) throws(DomainDataError) {
        try self.init(data: Data(json.serialized.utf8))
    }

    /// Decodes the event from its stored bytes.
    public init(data: Data) throws(DomainDataError) {
        let decoded: Result<Self, DomainDataError> = data.withUnsafeBytes { raw in
            // The members' ranges live on the stack while the event is read.
            withUnsafeTemporaryAllocation(of: EventFields.Member.self, capacity: EventFields.inlineMembers) { buffer in
                do throws(DomainDataError) {
                    return .success(try Self(fields: try EventFields(raw, type: Self.type, buffer: buffer)))
                } catch {
                    return .failure(error)
                }
            }
        }
        self = try decoded.get()
    }
}

/// Event data that is not what its type promises.
public struct DomainDataError: Error, Equatable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// The members of an event's JSON object, read from its bytes without building a tree: each
/// accessor finds its member and parses the value in place, with errors that name the member.
/// Valid only while the bytes it was made from are.
public struct EventFields {
    typealias Member = (key: Range<Int>, value: Range<Int>)
    /// How many members fit in the stack buffer; objects with more use the heap.
    static let inlineMembers = 12

    private let bytes: UnsafeRawBufferPointer
    private let inline: UnsafeMutableBufferPointer<Member>
    private let inlineCount: Int
    private let overflow: [Member]
    private let type: String

    init(_ bytes: UnsafeRawBufferPointer, type: String, buffer: UnsafeMutableBufferPointer<Member>) throws(DomainDataError) {
        var count = 0
        var overflow: [Member] = []
        do {
            try JSONScanner.forEachMember(ofObject: bytes) { key, value in
                if count < buffer.count {
                    buffer.initializeElement(at: count, to: (key, value))
                    count += 1
                } else {
                    overflow.append((key, value))
                }
            }
        } catch {
            throw DomainDataError("the data of \(type) is not a JSON object: \(error)")
        }
        self.bytes = bytes
        self.inline = buffer
        self.inlineCount = count
        self.overflow = overflow
        self.type = type
    }

    /// The raw bytes of a member's value; nil when there is no such member.
    private func value(_ key: String) -> UnsafeRawBufferPointer? {
        for index in 0..<inlineCount where matches(inline[index], key) {
            return UnsafeRawBufferPointer(rebasing: bytes[inline[index].value])
        }
        for member in overflow where matches(member, key) {
            return UnsafeRawBufferPointer(rebasing: bytes[member.value])
        }
        return nil
    }

    /// Whether a member's key, as written, is `key` (an escaped key never matches).
    @inline(__always)
    private func matches(_ member: Member, _ key: String) -> Bool {
        var key = key
        let length = member.key.count - 2
        return key.withUTF8 { wanted in
            guard wanted.count == length, let base = bytes.baseAddress, let wantedBase = wanted.baseAddress else {
                return wanted.count == length && length == 0
            }
            return memcmp(base + member.key.lowerBound + 1, wantedBase, length) == 0
        }
    }

    private func isNull(_ value: UnsafeRawBufferPointer) -> Bool { value.elementsEqual("null".utf8) }

    public func string(_ key: String) throws(DomainDataError) -> String {
        guard let value = value(key), value.first == UInt8(ascii: "\"") else { throw missing(key, "a string") }
        if !value.contains(UInt8(ascii: "\\")) {
            // Checked UTF-8 without escapes: the bytes between the quotes are the text.
            return String(decoding: UnsafeRawBufferPointer(rebasing: value[1..<(value.count - 1)]), as: UTF8.self)
        }
        do {
            return try JSONScanner.string(value)
        } catch {
            throw missing(key, "a string")
        }
    }

    public func optionalString(_ key: String) throws(DomainDataError) -> String? {
        guard let value = value(key), !isNull(value) else { return nil }
        return try string(key)
    }

    public func int(_ key: String) throws(DomainDataError) -> Int {
        guard let value = value(key), !value.isEmpty else { throw missing(key, "an integer") }
        var index = 0
        let negative = value[0] == UInt8(ascii: "-")
        if negative { index = 1 }
        guard index < value.count else { throw missing(key, "an integer") }
        var result = 0
        while index < value.count {
            let digit = value[index] &- UInt8(ascii: "0")
            guard digit < 10 else { throw missing(key, "an integer") }
            let (times, overflow1) = result.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = negative ? times.subtractingReportingOverflow(Int(digit)) : times.addingReportingOverflow(Int(digit))
            guard !overflow1, !overflow2 else { throw missing(key, "an integer in range") }
            result = next
            index += 1
        }
        return result
    }

    public func double(_ key: String) throws(DomainDataError) -> Double {
        guard let value = value(key), let first = value.first, first == UInt8(ascii: "-") || (first >= 48 && first <= 57),
            let number = Double(String(decoding: value, as: UTF8.self)), number.isFinite
        else { throw missing(key, "a number") }
        return number
    }

    public func bool(_ key: String) throws(DomainDataError) -> Bool {
        guard let value = value(key) else { throw missing(key, "a boolean") }
        if value.elementsEqual("true".utf8) { return true }
        if value.elementsEqual("false".utf8) { return false }
        throw missing(key, "a boolean")
    }

    private func missing(_ key: String, _ kind: String) -> DomainDataError {
        DomainDataError("\(type) needs \"\(key)\" as \(kind)")
    }
}
