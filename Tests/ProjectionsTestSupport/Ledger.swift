import EventStore
import Projections

/// A test projection with deletes: accounts get "Opened", "Deposited" {amount}, "Closed".
/// A deposit to an unknown account throws, and so does the type "Poison". Shared by the
/// projection tests of every backend (ConformanceTests) and the LMDB-only ones (ProjectionsTests).
public struct Ledger: Projection {
    public var name = "ledger"
    public var version = 1
    public let tables = ["accounts", "totals"]
    public var errorPolicy: ProjectionErrorPolicy = .stop
    public let eventTypes: Set<String>? = ["Opened", "Deposited", "Closed", "Poison"]
    public let queryParameters: [QueryParameter] = []

    public init(errorPolicy: ProjectionErrorPolicy = .stop) {
        self.errorPolicy = errorPolicy
    }

    struct Unknown: Error, CustomStringConvertible {
        let description: String
    }

    public func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
        let key = RowKey(event.stream)
        // Every event moves the total first, so a failed apply must undo a change.
        let total = try state.get("totals", RowKey("all"), as: Int.self) ?? 0
        try state.put("totals", RowKey("all"), total + 1)
        switch event.type {
        case "Opened":
            try state.put("accounts", key, 0)
        case "Deposited":
            guard let balance = try state.get("accounts", key, as: Int.self) else {
                throw Unknown(description: "no account '\(event.stream)'")
            }
            let amount = (try? JSONValue(parsing: Array(event.data)))?["amount"]?.intValue ?? 0
            try state.put("accounts", key, balance + Int(amount))
        case "Closed":
            try state.delete("accounts", key)
        default:
            throw Unknown(description: "poisoned")
        }
    }

    public func query(_ state: some StateReader, _ parameters: QueryParameters) async throws -> JSONValue {
        let accounts = try await state.rows("accounts", as: Int.self).map { ($0.key.parts([.string])?.first?.string ?? "?", JSONValue.int($0.value)) }
        return ["accounts": .object(accounts), "events": .int(try await state.get("totals", RowKey("all"), as: Int.self) ?? 0)]
    }
}
