import EventStoreCore
import Foundation

/// Queries and append conditions as JSON, as `esctl append --condition` and `esctl replay --query`
/// read them:
/// - a query: a list of items `[{"types":[T,...]?,"tags":[T,...]?}, ...]`, or one item alone;
/// - a condition: `{"failIfEventsMatch":QUERY,"after":P?}` (no `after`: the whole log).
public enum QueryJSON {
    /// The query a JSON value gives. Throws ``WireFormatError/Code/invalidQuery`` saying what is wrong.
    public static func query(_ bytes: [UInt8]) throws(WireFormatError) -> EventQuery {
        guard let value = try? JSONValue(parsing: bytes) else {
            throw WireFormatError(.invalidQuery, "The query is not JSON; give a list of {\"types\":[...],\"tags\":[...]} items.")
        }
        return try query(value)
    }

    /// The condition a JSON value gives. Throws ``WireFormatError/Code/invalidQuery`` saying what is wrong.
    public static func condition(_ bytes: [UInt8]) throws(WireFormatError) -> AppendCondition {
        guard let value = try? JSONValue(parsing: bytes), case let .object(members) = value else {
            throw WireFormatError(
                .invalidQuery, "The condition is not a JSON object; give {\"failIfEventsMatch\":[{\"types\":[...],\"tags\":[...]}],\"after\":P}.")
        }
        guard let items = value["failIfEventsMatch"] else {
            throw WireFormatError(.invalidQuery, "The condition has no \"failIfEventsMatch\"; give the query no event may match.")
        }
        if let key = Self.duplicateKey(members) {
            throw WireFormatError(.invalidQuery, "The condition gives the key \"\(key)\" twice; give it once.")
        }
        if let key = members.map(\.0).first(where: { $0 != "failIfEventsMatch" && $0 != "after" }) {
            throw WireFormatError(.invalidQuery, "The condition has the unknown key \"\(key)\"; give \"failIfEventsMatch\" and \"after\" only.")
        }
        var after: UInt64?
        if let position = value["after"], !position.isNull {
            guard let number = position.intValue, number >= 0, case .int = position else {
                throw WireFormatError(.invalidQuery, "The condition's \"after\" is not a position; give a whole number from 0 to 9223372036854775807.")
            }
            after = UInt64(number)
        }
        return AppendCondition(failIfEventsMatch: try query(items), after: after)
    }

    private static func query(_ value: JSONValue) throws(WireFormatError) -> EventQuery {
        let elements: [JSONValue]
        switch value {
        case let .array(items): elements = items
        case .object: elements = [value]
        default:
            throw WireFormatError(.invalidQuery, "The query is not a list of items; give [{\"types\":[...],\"tags\":[...]}, ...] (or one item alone).")
        }
        var items: [QueryItem] = []
        for (index, element) in elements.enumerated() {
            guard case let .object(object) = element else {
                throw WireFormatError(.invalidQuery, "Item \(index + 1) of the query is not an object; give {\"types\":[...],\"tags\":[...]}.")
            }
            if let key = Self.duplicateKey(object) {
                throw WireFormatError(.invalidQuery, "Item \(index + 1) of the query gives the key \"\(key)\" twice; give it once.")
            }
            if let key = object.map(\.0).first(where: { $0 != "types" && $0 != "tags" }) {
                throw WireFormatError(.invalidQuery, "Item \(index + 1) of the query has the unknown key \"\(key)\"; give \"types\" and \"tags\" only.")
            }
            func list(_ key: String) throws(WireFormatError) -> [String] {
                guard let field = element[key], !field.isNull else { return [] }
                guard let array = field.arrayValue, case let strings = array.compactMap(\.stringValue), strings.count == array.count else {
                    throw WireFormatError(.invalidQuery, "Item \(index + 1) of the query has \"\(key)\" that is not a list of strings.")
                }
                return strings
            }
            items.append(QueryItem(types: try list("types"), tags: try list("tags")))
        }
        let query = EventQuery(items)
        do {
            try query.validate()
        } catch {
            throw WireFormatError(.invalidQuery, error.message)
        }
        return query
    }

    private static func duplicateKey(_ members: [(String, JSONValue)]) -> String? {
        var seen = Set<String>()
        return members.first { !seen.insert($0.0).inserted }?.0
    }

    /// A JSON list of strings.
    static func stringList(_ strings: [String]) -> String {
        "[" + strings.map(JSONWriter.quote).joined(separator: ",") + "]"
    }

    /// The strings of a JSON list of strings; nil when it is not one.
    static func strings(_ raw: ArraySlice<UInt8>) -> [String]? {
        guard let value = try? JSONValue(parsing: Array(raw)), let array = value.arrayValue else { return nil }
        let strings = array.compactMap(\.stringValue)
        return strings.count == array.count ? strings : nil
    }
}
