import Foundation
import PostgresTestSupport
import Testing
import TestSupport

/// A temporary store for esctl end-to-end tests, and shorthands to run the built binary on it.
struct EsctlSandbox {
    /// The backends an esctl test runs on.
    enum Store: String, CaseIterable, Sendable { case lmdb, postgres }

    /// Runs `body` with a sandbox on a fresh store of `kind`: a directory named after `prefix`,
    /// or a throwaway PostgreSQL database.
    static func with(_ kind: Store, prefix: String, _ body: (EsctlSandbox) async throws -> Void) async throws {
        guard kind == .postgres else { return try await body(try EsctlSandbox(prefix: prefix)) }
        try await withDatabase(body)
    }

    let directory: TemporaryDirectory
    /// The store: a directory inside `directory` (created by the first command), or a database URL.
    let db: String

    init(prefix: String = "esctl-test") throws {
        directory = try TemporaryDirectory(prefix: prefix)
        db = directory.appending("store")
    }

    /// A sandbox on the store `db` names (a PostgreSQL URL, say), with a temporary directory beside it.
    init(db: String) throws {
        directory = try TemporaryDirectory(prefix: "esctl-test")
        self.db = db
    }

    /// Runs `esctl ARGUMENTS --db STORE`, feeding `stdin` when given.
    func esctl(_ arguments: [String], stdin: String? = nil, timeout: Duration = .seconds(60)) async throws -> ProcessOutput {
        try await ProcessRunner.esctl(arguments, db: db, stdin: stdin.map { Data($0.utf8) }, timeout: timeout)
    }

    /// Runs `esctl ARGUMENTS --db STORE`.
    func esctl(_ arguments: String..., stdin: String? = nil) async throws -> ProcessOutput {
        try await esctl(arguments, stdin: stdin)
    }

    /// Each line of standard output, parsed as a JSON object.
    func objects(_ output: ProcessOutput) throws -> [[String: Any]] {
        try output.lines.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
        }
    }

    /// The store's event count, through `esctl stats --json`; 0 when there is no store at all
    /// (nothing was ever written).
    func eventCount() async throws -> Int {
        let output = try await esctl(["stats", "--json"])
        if output.status == 67 { return 0 }
        return try objects(output).first?["eventCount"] as? Int ?? -1
    }

    /// Runs `body` with a sandbox on a fresh PostgreSQL database, dropped afterwards.
    static func withDatabase(_ body: (EsctlSandbox) async throws -> Void) async throws {
        let database = try await ThrowawayDatabase.create()
        do {
            try await body(try EsctlSandbox(db: database.url))
        } catch {
            try? await database.drop()
            throw error
        }
        try await database.drop()
    }
}
