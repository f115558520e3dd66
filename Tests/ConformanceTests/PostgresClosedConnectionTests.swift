import EventStoreCore
@testable import EventStorePostgres
import EventStoreTesting
import Foundation
import Logging
import PostgresNIO
import PostgresTestSupport
import TestSupport
import Testing

/// A statement on a connection that closed (a failover's `57P01`): the driver writes it to the
/// closed channel without a word, and its answer never comes. A rebuild whose read transaction
/// lost its connection between two statements so waited for good; later, one whose statement
/// was checked just before the close ran waited so too (``StatementWatch``).
@Suite("PostgreSQL: a statement on a connection the server ended")
struct PostgresClosedConnectionTests {
    @Test("fails at once with ConnectionClosed, a failover's failure mapped to storeUnavailable, and never waits")
    func statementOnEndedConnection() async throws {
        try await withConnection { connection, location, logger in
            // Given a connection that the server ends, as a primary's shutdown ends its sessions
            let ender = try await OwnConnection.connect(location, as: .probe, logger: logger, on: ContinuousClock())
            let pid = try #require(try await connection.rows("SELECT pg_backend_pid()", logger: logger).first).decode(Int32.self)
            _ = try await ender.rows("SELECT pg_terminate_backend(\(pid))", logger: logger)
            try await ender.close()
            try await waitUntil("the ended connection to close", timeout: .seconds(10)) { connection.isClosed }

            // When a statement is sent on it
            let outcome = try await Self.outcome("the statement on the ended connection") {
                try await connection.rows("SELECT 1", logger: logger)
            }

            // Then it fails at once as a failover's failure that never ran, which callers map
            // to storeUnavailable (a rebuild's exit 69, made again)
            #expect(outcome == "ConnectionClosed")
            #expect(PoolSwitch.isFailover(ConnectionClosed()))
            #expect(!PoolSwitch.lostUnderCall(ConnectionClosed()))
            #expect(PostgresErrors.mapped(ConnectionClosed(), location: "here").code == .storeUnavailable)
        }
    }

    @Test("a statement whose check came just before its connection closed fails as one that may have run, and never waits")
    func statementRacingClose() async throws {
        try await withConnection { connection, _, logger in
            // Given a statement whose check of its connection came just before the connection
            // closed (a failover's close queued on the event loop as the statement was sent):
            // its write comes after the close, and the driver drops it without a word
            try await connection.close()
            let watch = StatementWatch(interval: .milliseconds(50))

            // When it is sent past the check
            let outcome = try await Self.outcome("the statement sent as its connection closed") {
                try await watch.run("SELECT 1", on: connection, logger: logger).collect()
            }

            // Then the watch ends it as a failover's failure that may have run (its outcome
            // unknown), which callers map to storeUnavailable, and holds it no more
            #expect(outcome == "ClosedUnderStatement")
            #expect(PoolSwitch.isFailover(ClosedUnderStatement()))
            #expect(PoolSwitch.lostUnderCall(ClosedUnderStatement()))
            #expect(PostgresErrors.mapped(ClosedUnderStatement(), location: "here").code == .storeUnavailable)
            #expect(watch.underWay == 0)
        }
    }

    @Test("a statement on an open connection is answered through the watch, and leaves nothing under way")
    func statementAnswered() async throws {
        try await withConnection { connection, _, logger in
            // Given an open connection and a watch
            let watch = StatementWatch(interval: .milliseconds(50))

            // When statements are sent, one of them failing
            let rows = try await watch.run("SELECT 41 + 1", on: connection, logger: logger).collect()
            let failure = await #expect(throws: PSQLError.self) { try await watch.run("SELECT nonsense", on: connection, logger: logger) }

            // Then their answers are the driver's, and the watch holds none of them
            #expect(try rows.first?.decode(Int32.self) == 42)
            #expect(failure?.serverInfo?[.sqlState] == "42703")
            #expect(watch.underWay == 0)
        }
    }

    /// Runs `body` with a connection of its own to a throwaway database, which it then drops.
    private func withConnection(
        _ body: (PostgresConnection, PostgresLocation, Logger) async throws -> Void
    ) async throws {
        let database = try await ThrowawayDatabase.create()
        do {
            let location = try PostgresLocation(url: database.url)
            let logger = StoreConfiguration().logger
            let connection = try await OwnConnection.connect(location, as: .probe, logger: logger, on: ContinuousClock())
            do {
                try await body(connection, location, logger)
            } catch {
                try? await connection.close()
                throw error
            }
            try? await connection.close()
        } catch {
            try? await database.drop()
            throw error
        }
        try await database.drop()
    }

    /// What `statement` came to within 10 s: "answered", or the name of the error's type.
    private static func outcome(_ what: String, _ statement: @escaping @Sendable () async throws -> [PostgresRow]) async throws -> String {
        try await withTimeout(.seconds(10), "\(what) to end") {
            do {
                _ = try await statement()
                return "answered"
            } catch {
                return String(describing: type(of: error))
            }
        }
    }
}
