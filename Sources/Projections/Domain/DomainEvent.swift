import EventStore
import Foundation

/// An event of one of the apps' domains: a `Codable` value with a stable type name, stored as
/// JSON data. `json` and `init(json:)` are the store's fast path; the synthesized `Codable`
/// conformance uses the same keys (a test holds them together).
public protocol DomainEvent: Codable, Sendable, Equatable {
    /// The event's type name in the log. Stable: changing it orphans recorded events.
    static var type: String { get }
    /// The event's data.
    var json: JSONValue { get }
    /// Reads the event from its data; throws ``DomainDataError`` naming what is missing or wrong.
    init(json: JSONValue) throws(DomainDataError)
}

extension DomainEvent {
    /// The event ready to append.
    public var newEvent: NewEvent {
        NewEvent(type: Self.type, data: Data(json.serialized.utf8))
    }

    /// Decodes a recorded event of this type.
    public init(_ recorded: RecordedEvent) throws(DomainDataError) {
        let json: JSONValue
        do {
            json = try JSONValue(parsing: Array(recorded.data))
        } catch {
            throw DomainDataError("the data of \(recorded.type) at position \(recorded.position) is not JSON: \(error)")
        }
        try self.init(json: json)
    }
}

/// Event data that is not what its type promises.
public struct DomainDataError: Error, Equatable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// Reads members of an event's JSON object, with errors that name the member.
struct EventFields {
    let json: JSONValue
    let type: String

    init(_ json: JSONValue, _ type: String) throws(DomainDataError) {
        guard case .object = json else { throw DomainDataError("the data of \(type) is not a JSON object") }
        self.json = json
        self.type = type
    }

    func string(_ key: String) throws(DomainDataError) -> String {
        guard let value = json[key]?.stringValue else { throw missing(key, "a string") }
        return value
    }

    func optionalString(_ key: String) throws(DomainDataError) -> String? {
        guard let value = json[key], !value.isNull else { return nil }
        guard let text = value.stringValue else { throw missing(key, "a string or null") }
        return text
    }

    func int(_ key: String) throws(DomainDataError) -> Int {
        guard let value = json[key]?.intValue, let int = Int(exactly: value) else { throw missing(key, "an integer") }
        return int
    }

    func double(_ key: String) throws(DomainDataError) -> Double {
        guard let value = json[key]?.doubleValue else { throw missing(key, "a number") }
        return value
    }

    func bool(_ key: String) throws(DomainDataError) -> Bool {
        guard let value = json[key]?.boolValue else { throw missing(key, "a boolean") }
        return value
    }

    private func missing(_ key: String, _ kind: String) -> DomainDataError {
        DomainDataError("\(type) needs \"\(key)\" as \(kind)")
    }
}
