import CoreMetrics
import EventStore
import Foundation
import Projections

extension StoreOptions {
    /// Opens the store and a runner of every registered projection (``projections()``). Opening may rebuild
    /// projections whose version changed, or (with `finishingRebuilds`) finish an interrupted
    /// rebuild: it says so on standard error, with progress when that is a terminal.
    func openRunner(
        durability: Durability = .full, finishingRebuilds: Bool = true, mode: OpenMode = .existing, metricsFactory: (any MetricsFactory)? = nil,
        subscriptionPageBytes: Int? = nil, rebuildPacing: RebuildPacing = .default
    ) async throws -> (any EventLog, ProjectionRunner) {
        let projections = try self.projections()
        let store = try await open(
            mode, durability: durability, metricsFactory: metricsFactory, subscriptionPageBytes: subscriptionPageBytes)
        do {
            let progress = ProgressLine()
            let runner = try await ProjectionRunner(
                store: store, projections: projections, rebuildPacing: rebuildPacing, progress: progress.report,
                finishingRebuilds: finishingRebuilds)
            progress.finish()
            for notice in runner.notices { Console.note("\(Console.toolName): \(notice)\n") }
            return (store, runner)
        } catch {
            await store.close()
            throw error
        }
    }

    /// Opens the store and its runner as ``openRunner(durability:finishingRebuilds:mode:metricsFactory:subscriptionPageBytes:rebuildPacing:)``
    /// does, or, when the store refuses this process's writes (``EventStoreError/refusesWriting``:
    /// files read-only for this user, a PostgreSQL standby), read-only: its queries then answer
    /// from the projections that are caught up as they stand. Any other failure (a server that
    /// cannot be reached, a full disk) is thrown as it is: reading would not cure it, and a server
    /// must not stay read-only for its whole life because of a blip at its start. `readOnly` asks
    /// for reading at once. Says on standard error when it falls back to reading, with
    /// `announcing`. Throws what opening for writing threw when reading fails too.
    func openRunnerOrReading(
        readOnly: Bool = false, announcing: Bool, durability: Durability = .full, finishingRebuilds: Bool = true, mode: OpenMode = .existing,
        metricsFactory: (any MetricsFactory)? = nil, subscriptionPageBytes: Int? = nil, rebuildPacing: RebuildPacing = .default
    ) async throws -> (any EventLog, ProjectionRunner) {
        let reading = { [self] in
            try await openRunner(mode: .readOnly, metricsFactory: metricsFactory, subscriptionPageBytes: subscriptionPageBytes, rebuildPacing: rebuildPacing)
        }
        if readOnly { return try await reading() }
        do {
            return try await openRunner(
                durability: durability, finishingRebuilds: finishingRebuilds, mode: mode, metricsFactory: metricsFactory,
                subscriptionPageBytes: subscriptionPageBytes, rebuildPacing: rebuildPacing)
        } catch let error as EventStoreError where error.refusesWriting {
            guard let opened = try? await reading() else { throw error }
            if announcing {
                Console.note("\(Console.toolName): \(error.message) Reading it only: writes answer 503, and queries answer from the projections that are caught up.\n")
            }
            return opened
        }
    }
}

/// One line of progress on standard error, redrawn in place, shown only on a terminal.
final class ProgressLine: Sendable {
    private let isShown = Console.errorIsTerminal

    /// Shows how far the named projections are.
    var report: ProjectionRunner.Progress {
        { [isShown] names, position, head in
            guard isShown, head > 0 else { return }
            let percent = Int(Double(position) / Double(head) * 100)
            Console.note("\r\u{1B}[K\(names.joined(separator: ", ")): \(position)/\(head) (\(percent)%)")
        }
    }

    /// Clears the line.
    func finish() {
        if isShown { Console.note("\r\u{1B}[K") }
    }
}
