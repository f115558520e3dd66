import EventStoreCore
@testable import EventStorePostgres
import EventStoreTesting
import Foundation
import PostgresNIO
import PostgresTestSupport
import TestSupport
import Testing

/// A statement on a connection the server has already ended (a failover's `57P01`): the driver
/// writes it to the closed channel without a word, and its answer never comes. A rebuild whose
/// read transaction lost its connection between two statements so waited for good.
@Suite("PostgreSQL: a statement on a connection the server ended")
struct PostgresClosedConnectionTests {
    @Test("fails at once with ConnectionClosed, a failover's failure mapped to storeUnavailable, and never waits")
    func statementOnEndedConnection() async throws {
        let database = try await ThrowawayDatabase.create()
        do {
            let location = try PostgresLocation(url: database.url)
            let logger = StoreConfiguration().logger
            // Given a connection that the server ends, as a primary's shutdown ends its sessions
            let connection = try await OwnConnection.connect(location, as: .owner, logger: logger, on: ContinuousClock())
            let ender = try await OwnConnection.connect(location, as: .probe, logger: logger, on: ContinuousClock())
            let pid = try #require(try await connection.rows("SELECT pg_backend_pid()", logger: logger).first).decode(Int32.self)
            _ = try await ender.rows("SELECT pg_terminate_backend(\(pid))", logger: logger)
            try await ender.close()
            try await waitUntil("the ended connection to close", timeout: .seconds(10)) { connection.isClosed }

            // When a statement is sent on it
            let outcome = try await withTimeout(.seconds(10), "the statement on the ended connection to fail") {
                do {
                    _ = try await connection.rows("SELECT 1", logger: logger)
                    return "answered"
                } catch {
                    return String(describing: type(of: error))
                }
            }

            // Then it fails at once as a failover's failure that never ran, which callers map
            // to storeUnavailable (a rebuild's exit 69, made again)
            #expect(outcome == "ConnectionClosed")
            #expect(PoolSwitch.isFailover(ConnectionClosed()))
            #expect(!PoolSwitch.lostUnderCall(ConnectionClosed()))
            #expect(PostgresErrors.mapped(ConnectionClosed(), location: "here").code == .storeUnavailable)
        } catch {
            try? await database.drop()
            throw error
        }
        try await database.drop()
    }
}
