import EventStoreCore
import Projections

/// Every book and who has it: table `books`, keyed by ISBN; table `loans`, keyed by member and
/// ISBN, for a member's books.
public struct ShelfProjection: Projection {
    public let name = "shelf"
    public let version = 1
    public let tables = ["books", "loans"]
    public let eventTypes: Set<String>? = Set(LendingEvent.types)
    public let errorPolicy = ProjectionErrorPolicy.stop
    public let queryParameters = [QueryParameter("member", "only the books this member has")]

    public init() {}

    /// A book on the shelf, or lent.
    public struct Entry: Codable, Sendable, Equatable, RowValue {
        public var title: String
        public var lentTo: String?
    }

    public func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
        switch try LendingEvent(recorded: event) {
        case .added(let added):
            try state.put("books", RowKey(added.isbn), Entry(title: added.title, lentTo: nil))
        case .lent(let lent):
            guard var entry = try state.get("books", RowKey(lent.isbn), as: Entry.self) else { return }
            entry.lentTo = lent.member
            try state.put("books", RowKey(lent.isbn), entry)
            try state.put("loans", RowKey(lent.member, lent.isbn), Entry(title: entry.title, lentTo: lent.member))
        case .returned(let returned):
            guard var entry = try state.get("books", RowKey(returned.isbn), as: Entry.self) else { return }
            entry.lentTo = nil
            try state.put("books", RowKey(returned.isbn), entry)
            try state.delete("loans", RowKey(returned.member, returned.isbn))
        }
    }

    public func query(_ state: some StateReader, _ parameters: QueryParameters) async throws -> JSONValue {
        // At most 1,000 books: a page bounded however large the library grows.
        if let member = parameters["member"] {
            let rows = try await state.rows("loans", prefix: RowKey(member), reverse: false, limit: 1_000, as: Entry.self)
            return .array(rows.compactMap { row in
                guard let (_, isbn) = row.key.decode(String.self, String.self) else { return nil }
                return ["isbn": .string(isbn), "title": .string(row.value.title), "lentTo": .string(member)]
            })
        }
        let rows = try await state.rows("books", prefix: RowKey(), reverse: false, limit: 1_000, as: Entry.self)
        return .array(rows.compactMap { row in
            guard let isbn = row.key.decode(String.self) else { return nil }
            return ["isbn": .string(isbn), "title": .string(row.value.title), "lentTo": row.value.lentTo.map { .string($0) } ?? .null]
        })
    }
}
