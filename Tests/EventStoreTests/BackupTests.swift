import EventStore
import Foundation
import Testing
import TestSupport

/// A backup that is cancelled or fails leaves nothing behind, so the same destination can be
/// given again.
@Suite("Backups that stop")
struct BackupTests {
    @Test("cancelling a backup removes its partial copy, and a new directory it made")
    func cancelledBackup() async throws {
        let f = try StoreFixture()
        _ = try await f.store.append(to: "s", events: (1...500).map { event("T", "{\"n\":\($0)}") })
        let destination = f.directory.appending("copy")
        // Given a backup task cancelled before it starts copying
        let gate = AsyncGate()
        let task = Task { [store = f.store] in
            await gate.wait()
            try await store.backup(to: destination)
        }
        task.cancel()
        gate.open()
        // Then it throws CancellationError and nothing is left
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(!FileManager.default.fileExists(atPath: destination))
        // And the same destination takes a backup afterwards
        try await f.store.backup(to: destination)
        let copy = try EventStore(path: destination, mode: .readOnly)
        defer { copy.close() }
        #expect(try copy.headPosition() == 500)
    }
}

/// Lets a task wait until the test opens the gate.
final class AsyncGate: Sendable {
    private let state = AwaitableState(false)
    func wait() async { try? await state.wait(.seconds(30), "the gate to open") { $0 } }
    func open() { state.update { $0 = true } }
}
