import Foundation
import PostgresTestSupport
import Testing
import TestSupport

/// esctl on a PostgreSQL database: every command that works on a store directory works on a
/// postgres:// URL, and backup says to use PostgreSQL's own tools.
@Suite("esctl on PostgreSQL")
struct EsctlPostgresTests {
    /// Runs `body` with a sandbox on a fresh database, dropped afterwards.
    func withDatabase(_ body: (EsctlSandbox) async throws -> Void) async throws {
        try await EsctlSandbox.withDatabase(body)
    }

    @Test("reading a database without a store exits 67 and creates nothing; init creates it")
    func initAndMissing() async throws {
        try await withDatabase { s in
            // Given a database without the store's tables
            // When reading
            let stats = try await s.esctl("stats")
            // Then 67, one sentence naming the database, and nothing created
            #expect(stats.status == 67)
            #expect(stats.stderr.contains("There is no event store in the PostgreSQL database"))
            #expect(try await s.esctl("replay").status == 67)
            // When init runs, then the store exists and is empty
            let created = try await s.esctl("init")
            #expect(created.status == 0)
            #expect(created.stdout.hasPrefix("created an empty store at postgres://"))
            #expect(try await s.eventCount() == 0)
        }
    }

    @Test("a store of a newer schema version is refused with 69 and one sentence")
    func newerSchema() async throws {
        let database = try await ThrowawayDatabase.create()
        let s = try EsctlSandbox(db: database.url)
        // Given a store whose schema a newer program wrote
        #expect(try await s.esctl("init").status == 0)
        try await database.execute("UPDATE eventstore.schema_version SET version = 99")
        // When this esctl opens it, then it refuses, naming both versions
        let stats = try await s.esctl("stats")
        #expect(stats.status == 69)
        #expect(stats.stderr.contains("has schema version 99, newer than this program knows (6)"))
        #expect(try await s.esctl("append", "s", "T").status == 69)
        try await database.drop()
    }

    @Test("a database that refuses writes, as a standby does, is queried for reading: a caught-up projection answers, one behind exits 69 saying how to catch up")
    func queryWhereWritesAreRefused() async throws {
        let database = try await ThrowawayDatabase.create()
        do {
            try await queryWhereWritesAreRefused(database)
        } catch {
            try? await database.drop()
            throw error
        }
        try await database.drop()
    }

    func queryWhereWritesAreRefused(_ database: ThrowawayDatabase) async throws {
        let s = try EsctlSandbox(db: database.url)
        // Given count-by-type caught up with both events and stream-summary with the first only
        #expect(try await s.esctl("append", "s", "T").status == 0)
        #expect(try await s.esctl("query", "stream-summary").status == 0)
        #expect(try await s.esctl("append", "s", "U").status == 0)
        let counted = try await s.esctl("query", "count-by-type", "--json")
        #expect(counted.status == 0, "\(counted)")
        // When the database refuses every write from now on, as a standby does
        try await database.execute("ALTER DATABASE \"\(database.name)\" SET default_transaction_read_only = on")
        // Then the caught-up projection answers as before
        let answered = try await s.esctl("query", "count-by-type", "--json")
        #expect(answered.status == 0 && answered.stdout == counted.stdout, "\(answered)")
        // And the one behind exits 69 saying how to catch it up, as an append says why it cannot write
        let behind = try await s.esctl("query", "stream-summary")
        #expect(behind.status == 69, "\(behind)")
        #expect(behind.stderr.hasPrefix("esctl: The projection 'stream-summary' has applied the log up to position 1 of 2, and the store is open read-only"), "\(behind)")
        let append = try await s.esctl("append", "s", "V")
        #expect(append.status == 69 && append.stderr.contains("is read-only (a standby?)"), "\(append)")
        // And a database that cannot be reached is said so, not read-only
        let unreachable = try await ProcessRunner.esctl(["query", "count-by-type"], db: "postgres://postgres@127.0.0.1:1/none")
        #expect(unreachable.status == 69 && unreachable.stderr.hasPrefix("esctl: Cannot reach PostgreSQL"), "\(unreachable)")
    }

    @Test("append, batch, read, replay, stats, verify and export work on a URL")
    func logCommands() async throws {
        try await withDatabase { s in
            // Given appends, one by one and in a batch
            #expect(try await s.esctl("append", "orders-1", "Placed", "--data", #"{"total": 12}"#).stdout == "position 1, stream orders-1 at version 1\n")
            let batch = try await s.esctl(
                ["append", "--batch", "-", "--json"],
                stdin: #"{"stream":"orders-2","type":"Placed","data":{"total":3}}"# + "\n" + #"{"stream":"orders-1","type":"Paid","expectedVersion":1}"# + "\n")
            #expect(batch.status == 0)
            #expect(try s.objects(batch).map { $0["position"] as? Int } == [2, 3])
            // When a conflicting append is made, then 65 and nothing written
            #expect(try await s.esctl("append", "orders-1", "Paid", "--expected-version", "1").status == 65)
            // Then the reads show exactly the log
            let read = try await s.esctl("read", "orders-1", "--json")
            #expect(try s.objects(read).map { $0["type"] as? String } == ["Placed", "Paid"])
            let replay = try await s.esctl("replay", "--category", "orders", "--json")
            #expect(try s.objects(replay).map { $0["position"] as? Int } == [1, 2, 3])
            let stats = try s.objects(try await s.esctl("stats", "--json")).first
            #expect(stats?["eventCount"] as? Int == 3)
            #expect(stats?["streamCount"] as? Int == 2)
            #expect(stats?["headPosition"] as? Int == 3)
            #expect((stats?["path"] as? String)?.hasPrefix("postgres://") == true)
            let verify = try await s.esctl("verify")
            #expect(verify.status == 0)
            #expect(verify.stdout.hasPrefix("ok: 3 events in 2 streams, head 3"))
            let export = try await s.esctl("export")
            #expect(export.lines.count == 3)
            // And backup refuses with 64, naming PostgreSQL's tools
            let backup = try await s.esctl("backup", s.directory.appending("copy"))
            #expect(backup.status == 64)
            #expect(backup.stderr.contains("pg_dump"))
        }
    }

    @Test("subscribe sees an append made by another process")
    func subscribe() async throws {
        try await withDatabase { s in
            #expect(try await s.esctl("init").status == 0)
            // Given a subscriber waiting at the end of the log
            let subscriber = try RunningProcess(
                ProcessRunner.esctl, ["subscribe", "--db", s.db, "--count", "1", "--timeout", "30"])
            try await subscriber.waitForStderr(containing: "subscribed")
            // When another process appends
            #expect(try await s.esctl("append", "chat-1", "Said", "--data", #"{"text":"hi"}"#).status == 0)
            // Then the subscriber prints it and exits 0
            #expect(try await subscriber.waitForExit(timeout: .seconds(30)) == 0)
            #expect(subscriber.stdoutLines.count == 1)
            #expect(subscriber.stdoutLines.first?.contains("chat-1@1  Said") == true)
        }
    }

    @Test("the apps, projections, query, rebuild and tracking work on a URL")
    func appsAndProjections() async throws {
        try await withDatabase { s in
            // Given a workout and a chat driven through esctl
            #expect(try await s.esctl("fitness", "goal", "100").status == 0)
            #expect(try await s.esctl("fitness", "start").status == 0)
            #expect(try await s.esctl("chat", "say", "--user", "ann", "hi").status == 0)
            // Then the read models answer
            let workout = try await s.esctl("query", "app-state", "--json")
            #expect(workout.status == 0)
            #expect(workout.stdout.contains(#""state":"inProgress""#))
            let messages = try await s.esctl("query", "messages")
            #expect(messages.stdout.contains("ann") && messages.stdout.contains("hi"))
            // And a rebuild gives the hashes the live states had, each caught up by a query
            let names = try s.objects(try await s.esctl("projections", "--json")).compactMap { $0["name"] as? String }
            #expect(names.count >= 7)
            for name in names { _ = try await s.esctl("query", name) }
            let before = try await s.esctl("projections", "--json")
            #expect(try s.objects(before).allSatisfy { $0["lag"] as? Int == 0 })
            let rebuilt = try await s.esctl("rebuild", "--all")
            #expect(rebuilt.status == 0)
            let after = try await s.esctl("projections", "--json")
            #expect(try s.objects(before).map { $0["hash"] as? String } == s.objects(after).map { $0["hash"] as? String })
            // And a processor's tracking position is kept
            let tracked = try await s.esctl(["append", "--batch", "-", "--track", "mailer:1"], stdin: "")
            #expect(tracked.stdout == "tracking mailer at 1\n")
            #expect(try await s.esctl("tracking", "mailer").stdout == "1\n")
            #expect(try await s.esctl(["append", "--batch", "-", "--track", "mailer:1"], stdin: "").status == 65)
            #expect(try await s.esctl("verify", "--deep").status == 0)
        }
    }

    @Test("export from LMDB and import into PostgreSQL (and back) keep every projection's hash")
    func moving() async throws {
        try await withDatabase { postgres in
            // Given an LMDB store with the apps' traffic, its projections caught up
            let lmdb = try EsctlSandbox()
            for command in [
                ["fitness", "goal", "50"], ["fitness", "start"], ["chat", "say", "--user", "bob", "hello"],
                ["camp", "add-site", "15"], ["color", "press", "A"],
            ] {
                _ = try await lmdb.esctl(command)
            }
            #expect(try await lmdb.esctl("rebuild", "--all").status == 0)
            // When it is exported and imported into PostgreSQL, then back into a new LMDB store
            let exported = try await lmdb.esctl("export")
            #expect(exported.status == 0)
            #expect(try await postgres.esctl(["import", "-"], stdin: exported.stdout).status == 0)
            #expect(try await postgres.esctl("rebuild", "--all").status == 0)
            let back = try EsctlSandbox()
            let reexported = try await postgres.esctl("export")
            #expect(reexported.stdout == exported.stdout)
            #expect(try await back.esctl(["import", "-"], stdin: reexported.stdout).status == 0)
            #expect(try await back.esctl("rebuild", "--all").status == 0)
            // Then every projection has the same hash in all three
            func hashes(_ s: EsctlSandbox) async throws -> [String] {
                try s.objects(try await s.esctl("projections", "--json")).compactMap { object in
                    (object["name"] as? String).map { "\($0) \(object["hash"] as? String ?? "")" }
                }
            }
            let original = try await hashes(lmdb)
            #expect(original.count >= 7)
            #expect(try await hashes(postgres) == original)
            #expect(try await hashes(back) == original)
        }
    }
}
