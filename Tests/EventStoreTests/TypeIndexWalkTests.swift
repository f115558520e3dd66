@testable import EventStoreCore
@testable import EventStoreLMDB
import Foundation
import Testing
import TestSupport

/// A visit of a few rare types walks the type index instead of reading every record
/// (`LMDBTables.forEachRecordAtHand`): it must see exactly what a scan sees.
@Suite("Visits of rare types by the type index")
struct TypeIndexWalkTests {
    /// 3,000 events over three streams: "Rare" at every 10th position, "Other" at every 11th
    /// (not also a 10th), "Common" elsewhere; then the stream "doomed" (every third append) is
    /// deleted hard, leaving holes. Returns each position's type, holes left out.
    private func givenALogWithHoles(_ f: StoreFixture) async throws -> [UInt64: String] {
        var types: [UInt64: String] = [:]
        var position: UInt64 = 0
        for batch in 0..<30 {
            let stream = batch % 3 == 2 ? "doomed" : "kept-\(batch % 3)"
            var events: [NewEvent] = []
            for _ in 0..<100 {
                position += 1
                let type = position % 10 == 0 ? "Rare" : position % 11 == 0 ? "Other" : "Common"
                events.append(event(type, #"{"at":\#(position)}"#))
                if stream != "doomed" { types[position] = type }
            }
            _ = try await f.store.append(to: stream, events: events)
        }
        _ = try await f.store.deleteStream("doomed", hard: true)
        return types
    }

    /// The positions a visit of `types` from `start` through `last` hands over, and what it returns.
    private func visit(
        _ f: StoreFixture, _ types: Set<String>, from start: UInt64, through last: UInt64, stopAt: UInt64? = nil
    ) async throws -> (seen: [UInt64], examined: UInt64) {
        try await f.store.readTables { txn in
            var seen: [UInt64] = []
            let examined = try await txn.forEachView(from: start, through: last, types: types) { view in
                seen.append(view.position)
                #expect(types.contains(String(decoding: view.typeUTF8, as: UTF8.self)), "a view of another type at \(view.position)")
                if view.position <= 3000 {
                    #expect(String(decoding: view.data, as: UTF8.self) == #"{"at":\#(view.position)}"#, "the data of another event at \(view.position)")
                }
                return view.position != stopAt
            }
            return (seen, examined)
        }
    }

    @Test("the rule: rare types over a long span walk the index; common ones or short spans scan")
    func theRule() {
        #expect(LMDBTables.walksTypeIndex(wanted: 250, logged: 1000, span: 2047))
        #expect(!LMDBTables.walksTypeIndex(wanted: 251, logged: 1000, span: 2047))
        #expect(!LMDBTables.walksTypeIndex(wanted: 1, logged: 1000, span: LMDBTables.sparseSpan - 1))
        #expect(LMDBTables.walksTypeIndex(wanted: 0, logged: 0, span: LMDBTables.sparseSpan))
    }

    @Test("rare types over spans, holes and page boundaries: the same events as a scan, in order")
    func sameAsAScan() async throws {
        // Given
        let f = try StoreFixture()
        let types = try await givenALogWithHoles(f)
        let rare = types.values.filter { $0 != "Common" }.count
        // The case this test is for: the rare types are sparse enough to walk the index.
        #expect(LMDBTables.walksTypeIndex(wanted: rare, logged: types.count, span: 2999))
        let head = try f.store.headPosition()
        for wanted in [["Rare"], ["Rare", "Other"], ["Other"], ["Common"], ["Missing"], ["Missing", "Rare"]] {
            for (start, last) in [(1, UInt64.max), (1, 3000), (2, 2999), (150, 1900), (201, 300), (1990, 2100), (2900, .max), (3001, .max), (100, 120)] {
                // When
                let visited = try await visit(f, Set(wanted), from: UInt64(start), through: last)
                // Then
                let expected = types.keys.sorted().filter { $0 >= start && $0 <= last && wanted.contains(types[$0] ?? "") }
                #expect(visited.seen == expected, "\(wanted) from \(start) through \(last)")
                // The scan says the last record it read; a walk of the index the end of the span
                // it covered: both at or past the last event seen, never past the span or the head.
                let examinedAtLeast = expected.last ?? UInt64(start) - 1
                #expect(
                    visited.examined >= examinedAtLeast && visited.examined <= min(last, head),
                    "\(wanted) from \(start) through \(last) examined \(visited.examined)")
            }
        }
    }

    @Test("a visit stopped by its body returns the position it stopped at")
    func stoppedByTheBody() async throws {
        // Given
        let f = try StoreFixture()
        _ = try await givenALogWithHoles(f)
        // When: position 1,210 is a "Rare" event of a kept stream, and 1,200 a hole (the deleted stream's)
        let stopped = try await visit(f, ["Rare", "Other"], from: 1, through: .max, stopAt: 1210)
        // Then
        #expect(stopped.examined == 1210)
        #expect(stopped.seen.last == 1210)
        #expect(!stopped.seen.contains(1200) && stopped.seen.contains(1100))
    }

    @Test("a catch-up of the rare types after each of many small appends misses none")
    func catchUps() async throws {
        // Given a log long enough to walk the index
        let f = try StoreFixture()
        var types = try await givenALogWithHoles(f)
        var reached: UInt64 = 0
        var seen: [UInt64] = []
        for round in 0..<40 {
            // When: a few more events, then a visit from where the last one reached
            let type = round % 4 == 0 ? "Rare" : "Common"
            let appended = try await f.store.append(to: "kept-0", events: [event(type)])
            let position = try #require(appended.positions.last)
            types[position] = type
            let visited = try await visit(f, ["Rare"], from: reached + 1, through: .max)
            seen += visited.seen
            reached = visited.examined
        }
        // Then
        #expect(seen == types.keys.sorted().filter { types[$0] == "Rare" })
        #expect(reached == types.keys.max())
    }
}
