import EventStoreCore
import Logging
import PostgresNIO

/// Connections a handle makes outside its pool, for what holds a connection for as long as the
/// handle lives (the owner lock's session, the LISTEN connection) and for the open's probe when
/// the pool is slow to connect. Kept out of the pool, they never take one of its connections
/// for good, and the pool's leases never race them.
enum OwnConnection {
    /// The pauses between the attempts to connect to a server that refuses for now.
    static let refusalPauses: [Duration] = [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .milliseconds(1600)]

    /// Connects to `location` with a connection of its own, outside the pool, named for `role`. A server that
    /// refuses for now (too many connections, starting up, shutting down) is tried again after
    /// each of ``refusalPauses`` on `clock` (3.1 s in all), then reported. Throws
    /// ``EventStoreError/Code/storeUnavailable`` when the server cannot be reached, refuses the
    /// login, or still refuses after the last attempt.
    static func connect(
        _ location: PostgresLocation, as role: ConnectionRole, logger: Logger, on clock: any Clock<Duration>
    ) async throws -> PostgresConnection {
        var attempt = 0
        while true {
            do {
                return try await PostgresConnection.connect(configuration: location.connectionConfiguration(role), id: 0, logger: logger)
            } catch {
                guard let state = PostgresErrors.sqlState(of: error), PostgresErrors.refusalsForNow.contains(state) else {
                    throw PostgresErrors.mapped(error, location: location.description)
                }
                guard attempt < refusalPauses.count else {
                    let mapped = PostgresErrors.mapped(error, location: location.description)
                    let waited = refusalPauses.reduce(Int64(0)) { $0 + $1.components.seconds * 1000 + $1.components.attoseconds / 1_000_000_000_000_000 }
                    throw EventStoreError(
                        .storeUnavailable,
                        "PostgreSQL at \(location) refused \(attempt + 1) connections over \(waited / 1000).\(waited % 1000 / 100) s (\(mapped.cause?.description ?? state)); try again later, or let it take more connections (max_connections).",
                        cause: mapped.cause)
                }
                logger.notice(
                    "PostgreSQL refused a connection for now; trying again",
                    metadata: ["reason": "\(error)", "attempt": "\(attempt + 1)"])
                try await clock.sleep(for: refusalPauses[attempt])
                attempt += 1
            }
        }
    }

    /// As ``connect(_:as:logger:on:)``, but returns at once with `CancellationError` when the
    /// calling task is cancelled: postgres-nio's connect, cancelled mid-handshake, still waits
    /// out its connect timeout (10 s), and a handle's `close()` awaits the task that connects. A
    /// connection made after the cancellation is closed as soon as it comes.
    static func connectUnlessCancelled(
        _ location: PostgresLocation, as role: ConnectionRole, logger: Logger, on clock: any Clock<Duration>
    ) async throws -> PostgresConnection {
        let race = FirstOutcome<PostgresConnection>()
        let attempt = Task {
            do {
                let connection = try await connect(location, as: role, logger: logger, on: clock)
                if !race.finish(.success(connection)) { try? await connection.close() }
            } catch {
                race.finish(.failure(error))
            }
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in race.wait(continuation) }
        } onCancel: {
            // The outcome first: cancelled first, the attempt may fail at once (its connection
            // closed under it) and win the race with that error instead.
            race.finish(.failure(CancellationError()))
            attempt.cancel()
        }
    }
}
