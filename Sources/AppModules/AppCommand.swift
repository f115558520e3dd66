import Commands
import EventStoreCore

/// One command of an app, as every face offers it: a name, the fields of its JSON input (each
/// checked before it runs), and what runs it. Over HTTP it is `POST /apps/{app}/{name}`.
public struct AppCommand: Sendable {
    /// The command's name: lowercase letters, digits and single dashes, starting with a letter.
    public let name: String
    /// The `{app}` of its route when not its module's name (an app whose commands a user knows
    /// under two names).
    public let app: String?
    /// One line on what it does.
    public let summary: String
    /// The fields its input may have; any other is refused before it runs.
    public let fields: [AppField]
    /// Runs the command on the input, which holds only ``fields``. Throws the app's refusals
    /// (a `CodedError`; nothing is recorded unless the error says otherwise), ``AppInputError``
    /// for input the checks of ``fields`` let through but the command does not take, and the
    /// store's errors.
    public let run: @Sendable (AppInput) async throws -> AppAnswer

    /// A command named `name` taking `fields`, run by `run`.
    public init(
        _ name: String, app: String? = nil, summary: String = "", fields: [AppField] = [],
        run: @escaping @Sendable (AppInput) async throws -> AppAnswer
    ) {
        self.name = name
        self.app = app
        self.summary = summary
        self.fields = fields
        self.run = run
    }

    /// The names of ``fields``.
    public var fieldNames: Set<String> { Set(fields.map(\.name)) }
}

/// A field of a command's input: its name, its JSON type, whether it must be given, and what it
/// means (for forms and the API document).
public struct AppField: Sendable, Equatable {
    /// The JSON types a field may have.
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        case string, integer, number, boolean
    }

    public let name: String
    public let kind: Kind
    /// Whether the input must have it; a field that may be left out has a default the command applies.
    public let required: Bool
    /// One line on what it is, with its default when it has one.
    public let summary: String

    public init(_ name: String, _ kind: Kind, required: Bool = true, _ summary: String = "") {
        self.name = name
        self.kind = kind
        self.required = required
        self.summary = summary
    }
}

/// What a command answers: the events it recorded (none: nothing needed recording), or a state
/// object (a display after a key press, say), and the events of its streams it passed over
/// because they do not decode (a face warns of them).
public struct AppAnswer: Sendable {
    /// The body of an answer.
    public enum Body: Sendable {
        /// The events recorded, in order.
        case events([RecordedEvent])
        /// A state after the command, and whether the command recorded anything.
        case state(JSONValue, recorded: Bool)
    }

    public let body: Body
    public let passedOver: [PassedOverEvent]

    /// The events recorded.
    public static func events(_ events: [RecordedEvent], passedOver: [PassedOverEvent] = []) -> AppAnswer {
        AppAnswer(body: .events(events), passedOver: passedOver)
    }

    /// A state after the command; `recorded`: whether it recorded anything.
    public static func state(_ value: JSONValue, recorded: Bool, passedOver: [PassedOverEvent] = []) -> AppAnswer {
        AppAnswer(body: .state(value, recorded: recorded), passedOver: passedOver)
    }

    /// Whether the command recorded anything.
    public var recorded: Bool {
        switch body {
        case let .events(events): return !events.isEmpty
        case let .state(_, recorded): return recorded
        }
    }
}

/// A refusal that says more than its code: the read model that lists what exists (for a name
/// that does not), and events recorded anyway (a command recorded as invalid). Faces point to
/// the listing in their own terms and show the events.
public protocol AppRefusal: CodedError {
    /// For something named that does not exist: the projection that lists what does, and its
    /// parameter that scopes the list (`user`, say).
    var listing: (projection: String, parameter: String)? { get }
    /// What was recorded despite the refusal, in order.
    var recordedEvents: [RecordedEvent] { get }
}
