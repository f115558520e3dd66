import EventStoreCore
import Projections
/// How an alert feels.
public enum Severity: String, Sendable, Codable, CaseIterable {
    case good
    case bad
}

/// The alerts the workout sends by itself, in the order their thresholds are checked.
public enum AlertName: String, Sendable, Codable, CaseIterable {
    case milestone25Percent
    case milestone50Percent
    case milestone75Percent
    case goalComplete
    case nessie50Percent
    case nessie90Percent
    case caughtByNessie

    /// The alert's text, as the app shows it.
    public var text: String {
        switch self {
        case .milestone25Percent: return "You are 25% to goal. Keep going!"
        case .milestone50Percent: return "Woohoo! You're halfway there!"
        case .milestone75Percent: return "Almost there, you can do it!"
        case .goalComplete: return "Amazing, you did it! Have some 🥧."
        case .nessie50Percent: return "Nessie catching up halfway 🦕."
        case .nessie90Percent: return "Nessie almost has you 🦕!"
        case .caughtByNessie: return "Caught By Nessie!"
        }
    }

    public var severity: Severity {
        switch self {
        case .milestone25Percent, .milestone50Percent, .milestone75Percent, .goalComplete: return .good
        case .nessie50Percent, .nessie90Percent, .caughtByNessie: return .bad
        }
    }

    /// The alert itself.
    public var alert: Alert { Alert(name: self, text: text, severity: severity) }
}

/// An alert in a queue: a text and a severity, and the name of a built-in alert (nil for free
/// text). Two alerts are the same when their texts are equal.
public struct Alert: Sendable, Equatable, Codable, RowValue {
    public var name: AlertName?
    public var text: String
    public var severity: Severity

    public init(name: AlertName? = nil, text: String, severity: Severity) {
        self.name = name
        self.text = text
        self.severity = severity
    }

    /// `{"name","text","severity"}` (name null for free text).
    public var json: JSONValue {
        ["name": .string(name?.rawValue), "text": .string(text), "severity": .string(severity.rawValue)]
    }
}
