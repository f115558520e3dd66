import EventStoreCore

/// The stored rows a synchronous fold reads, on a backend whose rows are not at hand
/// (PostgreSQL, where each read is a round trip to await). `apply` is synchronous and pure, so a
/// row it asks for that is not here yet is noted and refused (``RowNotAtHand``); the runner
/// undoes the event, loads the rows noted, and applies the event again. An event asks for few
/// rows, so it is applied a few times at most, and no thread waits for the database.
final class RowCache {
    private let transaction: TableTransaction
    /// Rows loaded so far, by table and key (a nil value: there is none).
    private var rows: [String: [[UInt8]: [UInt8]?]] = [:]
    /// The rows asked for since the last ``load()`` that were not here.
    private var missing: [(table: String, key: [UInt8])] = []

    init(_ transaction: TableTransaction) {
        self.transaction = transaction
    }

    /// Whether a row was asked for that is not loaded yet.
    var isMissingRows: Bool { !missing.isEmpty }

    /// The stored row under `key`; throws ``RowNotAtHand`` (and notes it) when it is not loaded.
    func value(_ table: String, _ key: [UInt8]) throws -> [UInt8]? {
        if let known = rows[table]?[key] { return known }
        if let atHand = try transaction.valueAtHand(table, key) { return atHand }
        missing.append((table, key))
        throw RowNotAtHand(table: table)
    }

    /// Loads the rows noted as missing.
    func load() async throws {
        for (table, key) in missing where rows[table]?[key] == nil {
            rows[table, default: [:]][key] = .some(try await transaction.get(table, key))
        }
        missing.removeAll()
    }
}

/// A stored row a fold asked for that is not loaded yet (see ``RowCache``): the event is applied
/// again once it is.
struct RowNotAtHand: Error, CustomStringConvertible {
    let table: String

    var description: String { "a row of '\(table)' is not loaded yet" }
}
