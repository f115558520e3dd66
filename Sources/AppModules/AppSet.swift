import Commands
import EventStoreCore
import Projections

/// The app modules a face registers on one store, chosen from those built in: their read models,
/// upcasters and snapshot checks together, and their commands by route.
public struct AppSet: Sendable {
    /// The modules, in the order given.
    public let modules: [any AppModule]

    /// A set of `modules`. Throws ``AppSelectionError`` when a name is not lowercase letters,
    /// digits and dashes, or two modules share one.
    public init(_ modules: [any AppModule]) throws(AppSelectionError) {
        var seen: Set<String> = []
        for module in modules {
            try AppSet.validate(module.name, what: "app")
            guard module.name != "all" && module.name != "none" else {
                throw AppSelectionError("An app may not be named '\(module.name)': --apps reads that word as a choice of apps.")
            }
            guard seen.insert(module.name).inserted else {
                throw AppSelectionError("Two apps are named '\(module.name)'; each app needs a name of its own.")
            }
        }
        self.modules = modules
    }

    /// No app at all.
    public static let none = AppSet(unchecked: [])

    private init(unchecked modules: [any AppModule]) {
        self.modules = modules
    }

    /// The modules `selection` names among `available`: `all` (every one), `none`, or names
    /// separated by commas (in `available`'s order; white space around a name is ignored).
    /// Throws ``AppSelectionError`` for an empty name or one not available, with the names that are.
    public static func select(_ selection: String, from available: [any AppModule]) throws(AppSelectionError) -> AppSet {
        let all = try AppSet(available)
        let text = selection.trimmingWhiteSpace
        switch text {
        case "all", "": return all
        case "none": return .none
        default: break
        }
        var wanted: Set<String> = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let name = String(part).trimmingWhiteSpace
            guard !name.isEmpty else {
                throw AppSelectionError("The list of apps '\(Self.shown(selection))' has an empty name; separate names with single commas.")
            }
            guard available.contains(where: { $0.name == name }) else {
                throw AppSelectionError("There is no app named '\(Self.shown(name))'; the apps built in are \(all.described), or give all or none.")
            }
            wanted.insert(name)
        }
        return AppSet(unchecked: available.filter { wanted.contains($0.name) })
    }

    /// The modules' names, in order.
    public var names: [String] { modules.map(\.name) }

    /// Whether a module named `name` is in the set.
    public func contains(_ name: String) -> Bool { modules.contains { $0.name == name } }

    /// Every module's read models, in the modules' order.
    public var projections: [any Projection] { modules.flatMap(\.projections) }

    /// Every module's upcasters, to open a store with.
    public var upcasters: [Upcaster] { modules.flatMap(\.upcasters) }

    /// The schema versions every module writes and reads (``AppModule/schemaVersions``), merged.
    public var schemaVersions: [String: UInt16] {
        modules.reduce(into: [:]) { versions, module in versions.merge(module.schemaVersions) { max($0, $1) } }
    }

    /// Checks that `store` brings older events of every module's evolved types to the versions
    /// the module reads. Throws `EventStoreError.Code.invalidInput` when it was opened without
    /// the upcasters that do.
    public func checkUpcasters(of store: any EventLog) throws(EventStoreError) {
        try store.configuration.checkUpcasters(reaching: schemaVersions)
    }

    /// Checks a stored snapshot with the module whose decider it names; a snapshot of no
    /// module's decider is a problem too. The problem in one sentence, or nil. Throws the store's errors.
    public func checkSnapshot(_ snapshot: Snapshots.Entry, in store: any EventLog) async throws -> String? {
        guard let module = modules.first(where: { $0.snapshotDeciders.contains(snapshot.decider) }) else {
            return Self.belongsToNoDecider(snapshot)
        }
        return try await module.checkSnapshot(snapshot, in: store)
    }

    /// The problem of a snapshot that no module's decider claims, or whose streams fit none (a
    /// module's ``AppModule/checkSnapshot(_:in:)`` says so in these words).
    public static func belongsToNoDecider(_ snapshot: Snapshots.Entry) -> String {
        "a snapshot named '\(snapshot.decider)' for \(snapshot.versions.map(\.stream)) belongs to no app's decider"
    }

    /// Every module's commands bound to `context`, each with the `{app}` of its route. Throws what
    /// a module's ``AppModule/commands(_:)`` throws, and ``AppSelectionError`` when a command's
    /// name is not lowercase letters, digits and single dashes, a field's name is not letters,
    /// digits, `_` and `-`, a command declares a field twice, or two commands share a route.
    public func commands(_ context: AppContext) throws -> [RoutedCommand] {
        var routed: [RoutedCommand] = []
        var seen: Set<String> = []
        for module in modules {
            for command in try module.commands(context) {
                let app = command.app ?? module.name
                try AppSet.validate(app, what: "app")
                try AppSet.validate(command.name, what: "command")
                var fieldNames: Set<String> = []
                for field in command.fields {
                    guard AppSet.isPlainName(field.name, maxBytes: 64) else {
                        throw AppSelectionError(
                            "The command '\(app)/\(command.name)' declares a field named '\(AppSet.shown(field.name))'; use 1 to 64 letters, digits, '_' and '-', starting with a letter.")
                    }
                    guard fieldNames.insert(field.name).inserted else {
                        throw AppSelectionError("The command '\(app)/\(command.name)' declares the field '\(field.name)' twice; declare each field once.")
                    }
                }
                guard seen.insert("\(app)/\(command.name)").inserted else {
                    throw AppSelectionError("Two commands are named '\(app)/\(command.name)'; each needs a route of its own.")
                }
                routed.append(RoutedCommand(module: module.name, app: app, command: command))
            }
        }
        return routed
    }

    /// The names as a sentence lists them: "notes, tasks and todos"; "no app" when empty.
    public var described: String {
        switch names.count {
        case 0: return "no app"
        case 1: return names[0]
        default: return names.dropLast().joined(separator: ", ") + " and " + (names.last ?? "")
        }
    }

    /// Checks that `name` is 1 to 64 lowercase ASCII letters, digits and dashes, starts with a
    /// letter and neither ends with a dash nor holds two in a row: it goes into routes, command
    /// lines and operation ids as it is.
    public static func validate(_ name: String, what: String) throws(AppSelectionError) {
        let bytes = Array(name.utf8)
        let allowed = bytes.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
        guard !bytes.isEmpty, bytes.count <= 64, allowed, let first = bytes.first, (0x61...0x7A).contains(first), bytes.last != 0x2D,
            !name.contains("--")
        else {
            throw AppSelectionError(
                "The \(what) name '\(shown(name))' is not one a route can carry; use 1 to 64 lowercase letters, digits and single dashes, starting with a letter.")
        }
    }

    /// Whether `name` is 1 to `maxBytes` ASCII letters, digits, `_` and `-`, starting with a
    /// letter: a name that goes into JSON keys, file names and command lines as it is (a
    /// command's field, a console view, a program's own name).
    public static func isPlainName(_ name: String, maxBytes: Int) -> Bool {
        let bytes = Array(name.utf8)
        let isLetter = { (byte: UInt8) in (0x61...0x7A).contains(byte) || (0x41...0x5A).contains(byte) }
        guard let first = bytes.first, isLetter(first), bytes.count <= maxBytes else { return false }
        return bytes.allSatisfy { isLetter($0) || (0x30...0x39).contains($0) || $0 == 0x5F || $0 == 0x2D }
    }

    private static func shown(_ text: String) -> String { AppInput.shown(text) }
}

/// A command with the module it comes from and the `{app}` of its route.
public struct RoutedCommand: Sendable {
    /// The name of the module that declared it.
    public let module: String
    /// The `{app}` of its route: its own ``AppCommand/app``, else its module's name.
    public let app: String
    public let command: AppCommand

    /// `/apps/{app}/{command}`.
    public var path: String { "/apps/\(app)/\(command.name)" }
}

/// A list of apps that names none built in, or modules that cannot be registered together (two
/// of one name, a name a route cannot carry). Exit 64; HTTP 400 with the code `invalidInput`.
public struct AppSelectionError: CodedError, Equatable {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var codeName: String { "invalidInput" }
    public var category: ErrorCategory { .invalidInput }
    public var httpStatus: Int { 400 }
    public var description: String { message }
}

extension String {
    /// Without spaces, tabs and line ends at either end.
    fileprivate var trimmingWhiteSpace: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}
