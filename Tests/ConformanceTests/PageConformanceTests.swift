import EventStore
import EventStoreTesting
import Foundation
import Projections
import Testing

/// Paging a projection's rows: every row once, in order, forwards and backwards, with a filter,
/// from a stored state and from a state folded in memory.
@Suite("Pages, on every backend")
struct PageConformanceTests {
    /// Rows keyed by their event's position: one per event.
    struct Numbers: Projection {
        let name = "numbers"
        let version = 1
        let tables = ["rows"]
        let eventTypes: Set<String>? = nil
        let errorPolicy = ProjectionErrorPolicy.stop
        let queryParameters: [QueryParameter] = Page.parameters

        func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
            try state.put("rows", RowKey(Int(event.position)), Int(event.position))
        }

        func query(_ state: some StateReader, _ parameters: QueryParameters) async throws -> JSONValue {
            guard let page = try Page(parameters, projection: name) else { return .null }
            let rows = try await state.page("rows", prefix: RowKey(), page, cursorKey: { Int($0).map { RowKey($0) } }, as: Int.self) { _, n in n % 3 != 0 }
            return ["items": .array(rows.rows.map { .int($0.value) }), "next": rows.continuation.map { .int($0.value) } ?? .null]
        }
    }

    func walk(_ runner: ProjectionRunner, limit: Int, backward: Bool = false) async throws -> [Int] {
        var seen: [Int] = []
        var cursor: String?
        var pages = 0
        repeat {
            var parameters: [String: String] = ["limit": String(limit)]
            if let cursor { parameters[backward ? "before" : "after"] = cursor }
            let page = try await runner.query("numbers", parameters: QueryParameters(parameters))
            let items = page["items"]?.arrayValue?.compactMap(\.intValue).map(Int.init) ?? []
            #expect(items.count <= limit)
            seen = backward ? items + seen : seen + items
            cursor = page["next"]?.intValue.map { String($0) }
            pages += 1
        } while cursor != nil && pages < 1_000
        return seen
    }

    @Test("forward and backward pages give every row once, in order, for any page size", arguments: Backend.allCases)
    func everyRowOnce(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given 50 rows, of which the query keeps those not divisible by 3
            _ = try await f.log.append(to: "s", events: (0..<50).map { _ in event("N") })
            let runner = try await ProjectionRunner(store: f.log, projections: [Numbers()])
            let expected = (1...50).filter { $0 % 3 != 0 }
            // Then forward pages of any size give each once, in order
            for limit in [1, 2, 7, 33, 34, 100] {
                #expect(try await walk(runner, limit: limit) == expected, "limit \(limit)")
            }
            // And so do pages backwards from a cursor past the end
            var all: [Int] = []
            var cursor = "51"
            while true {
                let page = try await runner.query("numbers", parameters: ["limit": "5", "before": cursor])
                let items = page["items"]?.arrayValue?.compactMap(\.intValue).map(Int.init) ?? []
                all = items + all
                guard let next = page["next"]?.intValue else { break }
                cursor = String(next)
            }
            #expect(all == expected)
        }
    }

    @Test("the state folded in memory pages the same as the stored one", arguments: Backend.allCases)
    func inMemory(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            _ = try await f.log.append(to: "s", events: (0..<20).map { _ in event("N") })
            let runner = try await ProjectionRunner(store: f.log, projections: [Numbers()])
            for cursor in ["0", "4", "10", "19"] {
                let parameters: QueryParameters = ["limit": "4", "after": cursor]
                #expect(try await runner.query("numbers", parameters: parameters, asOf: 20) == (try await runner.query("numbers", parameters: parameters)))
                let before: QueryParameters = ["limit": "4", "before": cursor]
                #expect(try await runner.query("numbers", parameters: before, asOf: 20) == (try await runner.query("numbers", parameters: before)))
            }
        }
    }

    @Test("a bad limit, a cursor without a limit, both cursors, or a cursor that is not one are refused", arguments: Backend.allCases)
    func refusals(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let runner = try await ProjectionRunner(store: f.log, projections: [Numbers()])
            for parameters: QueryParameters in [["limit": "0"], ["limit": "x"], ["limit": "10001"], ["after": "3"], ["limit": "2", "after": "1", "before": "5"], ["limit": "2", "after": "x"]] {
                let error = await #expect(throws: ProjectionError.self, "\(parameters)") { try await runner.query("numbers", parameters: parameters) }
                #expect(error?.code == .invalidQuery)
            }
        }
    }
}
