import EventStore
import Foundation
import Hummingbird

/// A request's query parameters, percent-decoded (`+` as a space, as forms send it) and checked
/// against what the route takes: an unknown or repeated parameter, or a malformed value, is a
/// 400 naming the parameter.
struct RequestQuery {
    /// The parameters in the order given.
    let pairs: [(name: String, value: String)]

    /// The query of `request`. `known` lists the parameters the route takes (nil: any, for a
    /// route that hands the rest on, as a projection's query does); `repeatable` those that may
    /// come more than once. Throws ``ServerError`` with ``ServerError/Code/badRequest``.
    init(_ request: Request, known: Set<String>?, repeatable: Set<String> = []) throws(ServerError) {
        var pairs: [(name: String, value: String)] = []
        for item in (request.uri.query ?? "").split(separator: "&", omittingEmptySubsequences: true) {
            let rawName: Substring
            let rawValue: Substring
            if let equals = item.firstIndex(of: "=") {
                rawName = item[..<equals]
                rawValue = item[item.index(after: equals)...]
            } else {
                rawName = item
                rawValue = ""
            }
            guard let name = Self.decoded(rawName), !name.isEmpty else {
                throw ServerError(.badRequest, "The query has a parameter '\(rawName)' whose name is not valid percent-encoding; encode it again.")
            }
            guard let value = Self.decoded(rawValue) else {
                throw ServerError(.badRequest, "The query parameter '\(name)' has a value that is not valid percent-encoding; encode it again.")
            }
            if let known, !known.contains(name) {
                let takes = known.isEmpty ? "this route takes none" : "this route takes " + known.sorted().joined(separator: ", ")
                throw ServerError(.badRequest, "The query parameter '\(name)' is unknown; \(takes).")
            }
            if !repeatable.contains(name) && pairs.contains(where: { $0.name == name }) {
                throw ServerError(.badRequest, "The query parameter '\(name)' is given twice; give it once.")
            }
            pairs.append((name, value))
        }
        self.pairs = pairs
    }

    private static func decoded(_ text: Substring) -> String? {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }

    /// The value of `name`, when given.
    func value(_ name: String) -> String? {
        pairs.first { $0.name == name }?.value
    }

    /// Every value of `name`, in order.
    func values(_ name: String) -> [String] {
        pairs.filter { $0.name == name }.map(\.value)
    }

    /// Digits only (no sign, no spaces) as a UInt64; nil otherwise.
    static func number(_ text: String) -> UInt64? {
        isDigits(text) ? UInt64(text) : nil
    }

    /// `category`, when given: the part of a stream name before its first '-', so one with a '-'
    /// inside is a 400.
    /// Refuses a parameter given with no value (`category=`): a filter left empty would match
    /// everything on one route and nothing on another. Throws ``ServerError`` (400) naming it.
    func refuseEmptyValues() throws(ServerError) {
        if let empty = pairs.first(where: { $0.value.isEmpty }) {
            throw ServerError(.badRequest, "The query parameter '\(empty.name)' is empty; give it a value.")
        }
    }

    func category() throws(ServerError) -> String? {
        guard let category = value("category") else { return nil }
        guard EventFilter(category: category).category?.contains("-") != true else {
            throw ServerError(
                .badRequest,
                "The query parameter 'category' is the part of a stream name before its first '-', so '\(category)' names none.")
        }
        return category
    }

    /// `name` as a whole number of 0 or more (digits only: no sign, no spaces), when given.
    func unsigned(_ name: String, what: String) throws(ServerError) -> UInt64? {
        guard let text = value(name) else { return nil }
        guard let number = Self.number(text) else {
            throw ServerError(.badRequest, "The query parameter '\(name)' must be \(what), a whole number of 0 or more; '\(text)' is not one.")
        }
        return number
    }

    /// `name` as a whole number within `range`, when given.
    func whole(_ name: String, in range: ClosedRange<Int>) throws(ServerError) -> Int? {
        guard let text = value(name) else { return nil }
        guard Self.isDigits(text), let number = Int(text), range.contains(number) else {
            throw ServerError(
                .badRequest, "The query parameter '\(name)' must be a whole number from \(range.lowerBound) to \(range.upperBound); '\(text)' is not one.")
        }
        return number
    }

    /// `name` as a number of seconds (`2`, `0.25`) within `range`, when given.
    func seconds(_ name: String, in range: ClosedRange<Double>) throws(ServerError) -> Duration? {
        guard let text = value(name) else { return nil }
        let isDecimal = !text.isEmpty && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: ".") }
        guard isDecimal, let seconds = Double(text), range.contains(seconds) else {
            throw ServerError(
                .badRequest,
                "The query parameter '\(name)' must be a number of seconds from \(Self.text(range.lowerBound)) to \(Self.text(range.upperBound)); '\(text)' is not one.")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    private static func isDigits(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    private static func text(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}

extension ServerContext {
    /// The path parameter `name`, percent-decoded (so a stream name may hold any character,
    /// `/` as `%2F`). Throws ``ServerError`` with ``ServerError/Code/badRequest`` when it is not
    /// valid percent-encoding.
    func pathParameter(_ name: String) throws(ServerError) -> String {
        guard let raw = parameters.get(name) else {
            throw ServerError(.badRequest, "The path has no {\(name)}; see GET /openapi.yaml for the API.")
        }
        // Most names carry no escapes: Foundation's decoding (through NSString) is for the rest.
        if !raw.utf8.contains(UInt8(ascii: "%")) { return String(raw) }
        guard let decoded = raw.removingPercentEncoding else {
            throw ServerError(.badRequest, "The {\(name)} of the path, '\(raw)', is not valid percent-encoding; encode it again.")
        }
        return decoded
    }
}
