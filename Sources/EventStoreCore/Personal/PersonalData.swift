import Foundation

/// Data of an event that is personal to a subject (a person the app names, such as
/// `customer:C1`): the whole payload, or named top-level fields of a JSON object payload.
///
/// The store keeps it encrypted with the subject's key (AES-GCM, one key per subject, the
/// event's id and the subject as associated data) and decrypts it on every read. ``EventLog/forget(_:)``
/// destroys the key: from then on every read path shows the data as forgotten, as
/// `{"$forgotten":"SUBJECT"}` in place of each field (or of the whole payload), never as an error.
public struct PersonalData: Sendable, Equatable, Hashable {
    /// The subject the data belongs to: non-empty UTF-8, no control characters, at most 200 bytes.
    public var subject: String
    /// The top-level fields of the event's JSON object that are personal, or nil for the whole
    /// payload (which may then be any bytes).
    public var fields: [String]?
    /// On a read event: its subject was forgotten, and the data holds the marker where this
    /// part was. On an event to append (a copy, as `import` makes): the data holds the marker,
    /// and the part is stored as forgotten.
    public var isForgotten: Bool

    /// Marks the whole payload as personal to `subject`.
    public init(subject: String) {
        self.init(subject: subject, fields: nil)
    }

    /// Marks `fields` (top-level members of the JSON object payload; nil: the whole payload) as
    /// personal to `subject`.
    public init(subject: String, fields: [String]?) {
        self.subject = subject
        self.fields = fields
        self.isForgotten = false
    }

    /// A part as read, or as a copy of one: `isForgotten` when its data is the marker.
    public init(subject: String, fields: [String]?, isForgotten: Bool) {
        self.init(subject: subject, fields: fields)
        self.isForgotten = isForgotten
    }

    /// The marker that stands for forgotten data of `subject`: `{"$forgotten":"SUBJECT"}`.
    public static func forgottenMarker(_ subject: String) -> Data {
        Data("{\"$forgotten\":\(JSONWriter.quote(subject))}".utf8)
    }

    /// The subject a value (a field's, or a whole payload) names as forgotten, when it is the
    /// marker `{"$forgotten":"SUBJECT"}`; nil for any other value.
    public static func forgottenSubject(in value: Data) -> String? {
        guard value.first == UInt8(ascii: "{"),
            let members = try? JSONScanner.members(ofObject: [UInt8](value)), members.count == 1,
            members[0].key == "$forgotten"
        else { return nil }
        return try? JSONScanner.string([UInt8](value)[members[0].value])
    }

    /// The most parts one event may mark.
    public static let maximumPartsPerEvent = 16
}

/// The marker `{"$forgotten":"SUBJECT"}` that stands where forgotten personal data was.
public struct ForgottenMarker: Codable, Sendable, Equatable {
    /// The subject that was forgotten.
    public let subject: String

    enum CodingKeys: String, CodingKey {
        case subject = "$forgotten"
    }
}

extension KeyedDecodingContainer {
    /// The value under `key`, or `forgotten` when the data there is personal data whose subject
    /// was forgotten (it holds ``ForgottenMarker``). Throws as `decode(_:forKey:)` otherwise.
    public func decode<T: Decodable>(_ type: T.Type, forKey key: Key, orWhenForgotten forgotten: @autoclosure () -> T) throws -> T {
        do {
            return try decode(type, forKey: key)
        } catch {
            guard (try? decode(ForgottenMarker.self, forKey: key)) != nil else { throw error }
            return forgotten()
        }
    }
}
