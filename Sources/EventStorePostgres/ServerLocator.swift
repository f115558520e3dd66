import EventStoreCore
import Logging
import PostgresNIO

/// Finds, among the servers of a location (a primary and its standbys), the one a handle's
/// connections go to: the first, in the URL's order, whose role fits the handle's
/// `target_session_attrs` (libpq's rule). Each server is asked once, on a connection of its own
/// closed at once, whether it is in recovery and whether its sessions are read-only.
enum ServerLocator {
    /// How long one server may take to take a connection, and then to answer, before the next
    /// is asked: shorter than a pool connection's 10 s, since a server cut off by a partition
    /// answers nothing at all.
    static let probeTimeout: Duration = .seconds(3)

    /// What a server said it is.
    struct Role: Equatable, CustomStringConvertible {
        /// In recovery: a standby.
        var inRecovery: Bool
        /// Its sessions are read-only (a standby, or `default_transaction_read_only`).
        var readOnly: Bool

        /// Whether a connection with `attributes` may use this server; `preferStandby` takes
        /// any server here (``locate(_:writing:inUse:logger:)`` tries standbys first).
        func fits(_ attributes: PostgresLocation.TargetSessionAttributes) -> Bool {
            switch attributes {
            case .any, .preferStandby: true
            case .readWrite: !readOnly
            case .readOnly: readOnly
            case .primary: !inRecovery
            case .standby: inRecovery
            }
        }

        var description: String {
            inRecovery ? "a standby" : readOnly ? "a read-only primary" : "a primary that takes writes"
        }
    }

    /// The index, in `location.endpoints`, of the server to use. A location with one server and
    /// no `target_session_attrs` (or `any`) is not asked: index 0. `inUse`, the server a handle
    /// already uses, is asked first and kept when it still fits, or when it refuses a connection
    /// for now (too many connections: it is alive, and its role cannot have changed unseen by
    /// its own connections). Throws ``EventStoreError/Code/storeUnavailable`` when no server
    /// fits, saying what each was; `CancellationError` between servers once cancelled.
    static func locate(_ location: PostgresLocation, writing: Bool, inUse: Int? = nil, logger: Logger) async throws -> Int {
        guard location.choosesAmongServers else { return 0 }
        let wanted = location.effectiveTargetSessionAttributes(writing: writing)
        var findings: [String] = []
        var firstReachable: Int?
        var order = Array(location.endpoints.indices)
        if let inUse, let at = order.firstIndex(of: inUse) { order.insert(order.remove(at: at), at: 0) }
        for index in order {
            try Task.checkCancellation()
            let server = location.endpoints[index]
            do {
                let role = try await self.role(of: location.narrowed(to: index), logger: logger)
                if firstReachable == nil { firstReachable = index }
                if wanted == .preferStandby ? role.inRecovery : role.fits(wanted) { return index }
                findings.append("\(server) is \(role)")
            } catch {
                if index == inUse, let state = PostgresErrors.sqlState(of: error), state == "53300" { return index }
                let mapped = PostgresErrors.mapped(error, location: server.description)
                findings.append("\(server) did not answer (\(mapped.cause?.description ?? mapped.message))")
            }
        }
        if wanted == .preferStandby, let firstReachable { return firstReachable }
        throw EventStoreError(
            .storeUnavailable,
            "No server of \(location) fits target_session_attrs=\(wanted.rawValue): \(findings.joined(separator: "; ")).")
    }

    /// Asks the one server of `location` what it is: ``probeTimeout`` to connect, as long again
    /// to answer (a server that took the connection and then fell silent is closed on, which
    /// ends the query: postgres-nio's queries do not end on cancellation).
    static func role(of location: PostgresLocation, logger: Logger) async throws -> Role {
        var configuration = location.connectionConfiguration(.probe)
        configuration.options.connectTimeout = .init(probeTimeout)
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
        defer { Task { try? await connection.close() } }
        return try await withThrowingTaskGroup(of: Role?.self) { group in
            group.addTask {
                let rows = try await connection.rows(
                    "SELECT pg_is_in_recovery(), current_setting('transaction_read_only') = 'on'", logger: logger)
                guard let row = rows.first else { throw EventStoreError(.storageFailure, "The server \(location) did not say its role.") }
                let (inRecovery, readOnly) = try row.decode((Bool, Bool).self)
                return Role(inRecovery: inRecovery, readOnly: readOnly)
            }
            group.addTask {
                try await Task.sleep(for: probeTimeout)
                return nil
            }
            defer { group.cancelAll() }
            do {
                if let answered = try await group.next(), let role = answered { return role }
            } catch {
                // Closed, the connection fails a query still running, and the group can end.
                try? await connection.close()
                throw error
            }
            try? await connection.close()
            throw EventStoreError(.storeUnavailable, "The server \(location) took a connection but did not say its role in \(probeTimeout).")
        }
    }
}
