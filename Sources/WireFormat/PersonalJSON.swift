import EventStoreCore
import Foundation

/// The `"personal"` key of an event's JSON: `[{"subject":S,"fields":[F,...]|null,"forgotten":true?}]`,
/// what of the data is personal to whom (and, on a read event, which subjects were forgotten).
/// `read --json` and `export` write it; `append --batch` and `import` read it, so a copy seals
/// the same data again under the target store's keys (and keeps forgotten parts forgotten).
enum PersonalJSON {
    static func json(_ parts: [PersonalData]) -> String {
        "[" + parts.map { part in
            var object = JSONObjectWriter()
            object.add("subject", part.subject)
            object.add("fields", rawJSON: part.fields.map { "[" + $0.map(JSONWriter.quote).joined(separator: ",") + "]" } ?? "null")
            if part.isForgotten { object.add("forgotten", true) }
            return object.finish()
        }.joined(separator: ",") + "]"
    }

    /// What is wrong with a `"personal"` value that ``parts(_:)`` refuses.
    static let problem = "\"personal\" must be a list of {\"subject\":S,\"fields\":[F,...] or null,\"forgotten\":true?}"

    /// The parts a `"personal"` value gives; nil when it is not such a list.
    static func parts(_ raw: ArraySlice<UInt8>) -> [PersonalData]? {
        guard let value = try? JSONValue(parsing: Array(raw)), let elements = value.arrayValue else { return nil }
        var parts: [PersonalData] = []
        for element in elements {
            guard let subject = element["subject"]?.stringValue else { return nil }
            var fields: [String]?
            if let list = element["fields"], !list.isNull {
                guard let names = list.arrayValue?.compactMap(\.stringValue), names.count == list.arrayValue?.count else {
                    return nil
                }
                fields = names
            }
            if let forgotten = element["forgotten"], forgotten.boolValue == nil { return nil }
            parts.append(PersonalData(subject: subject, fields: fields, isForgotten: element["forgotten"]?.boolValue == true))
        }
        return parts
    }
}
