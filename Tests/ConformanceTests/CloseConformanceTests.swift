import EventStore
import EventStoreTesting
import Foundation
import Testing

@Suite("Closing, on every backend: one promise")
struct CloseConformanceTests {
    @Test("close() returns only after the appends queued before it are made: nothing is written after it returns, and every acknowledged append is there", arguments: Backend.allCases)
    func closeFinishesQueuedAppends(_ backend: Backend) async throws {
        try await withLog(backend, durability: .full) { f in
            // Given 40 appends started at once
            let log = f.log
            let before = log.writerStatistics.completedWrites
            let started = Counter()
            let appends = (0..<40).map { n in
                Task { () -> Result<AppendResult, EventStoreError> in
                    started.add()
                    do {
                        return .success(try await log.append(to: "s-\(n)", events: [event("T")]))
                    } catch let error as EventStoreError {
                        return .failure(error)
                    } catch {
                        return .failure(EventStoreError(.storageFailure, "\(error)"))
                    }
                }
            }
            try await withTimeout(.seconds(30), "the 40 appends to start") {
                while started.count < 40 { try await Task.sleep(for: .milliseconds(1)) }
            }
            // When the store is closed while they are queued or under way, and the writes it
            // completed are counted at once, and the log is read as close left it
            await log.close()
            let completed = log.writerStatistics.completedWrites - before
            try await f.reopen()
            let events = try await f.log.events()
            // Then every append was made or refused as closed, and the log holds exactly the
            // ones made: none was written after close returned
            var written = 0
            for (n, append) in appends.enumerated() {
                switch await append.value {
                case let .success(result):
                    written += 1
                    #expect(events.first { $0.position == result.positions[0] }?.stream == "s-\(n)")
                case let .failure(error):
                    #expect(error.code == .closed, "append \(n): \(error)")
                }
            }
            #expect(events.count == written, "events in the log as close left it, against appends acknowledged")
            #expect(completed == UInt64(written), "appends completed when close returned, against appends acknowledged")
        }
    }

    @Test("close() lets a table write under way finish and commit before it closes, and a close called meanwhile waits for the first", arguments: Backend.allCases)
    func closeLetsTableWritesFinish(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a table write under way, held until the test lets it go
            let log = f.log
            try await log.openTables(["side"])
            let before = log.writerStatistics.completedWrites
            let (reached, letGo) = (Flag(), Flag())
            let write = Task {
                try await log.writeTables { txn in
                    try await txn.put("side", Array("row".utf8), Array("written".utf8))
                    reached.set()
                    try await waitFor(letGo, "the test to let the held write go")
                }
            }
            try await waitFor(reached, "the table write to reach the gate")
            // When the store is closed twice, meanwhile
            let first = Task { await log.close() }
            try await withTimeout(.seconds(10), "close to begin refusing calls") {
                while !isClosed(log) { try await Task.sleep(for: .milliseconds(1)) }
            }
            let second = Task { await log.close() }
            // ...and the write is let go
            letGo.set()
            // Then the second close returns only once the first has: the write is complete by then
            try await withTimeout(.seconds(30), "the second close to return") { await second.value }
            #expect(log.writerStatistics.completedWrites - before == 1, "writes completed when the second close returned")
            // And the write committed, and the first close returned
            try await withTimeout(.seconds(30), "the held write and the first close to finish") {
                try await write.value
                await first.value
            }
            try await f.reopen()
            try await f.log.openTables(["side"])
            let row = try await f.log.readTables { txn in try await txn.get("side", Array("row".utf8)) }
            #expect(row.map { String(decoding: $0, as: UTF8.self) } == "written")
        }
    }
}

/// Returns once `flag` is set; fails after 30 s saying `what` never happened. It polls: the
/// waiter may be a table closure on the LMDB writer's executor, where nothing else could resume it.
private func waitFor(_ flag: Flag, _ what: String) async throws {
    try await withTimeout(.seconds(30), what) {
        while !flag.isSet { try await Task.sleep(for: .milliseconds(1)) }
    }
}
