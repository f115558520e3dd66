import EventStoreTesting
import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A store that cannot be written here (files read-only for this user, or `--read-only`) is
/// served and queried for reading: projections that are caught up answer, the others say how to
/// catch them up, writes answer 503.
@Suite("esctl serve and query on a store read-only for them")
struct ServeReadOnlyTests {
    let directory: TemporaryDirectory
    let db: String

    init() throws {
        directory = try TemporaryDirectory(prefix: "esctl-serve-readonly")
        db = directory.appending("store")
    }

    /// esctl with `arguments` and `--db`, as this user.
    func esctl(_ arguments: String...) async throws -> ProcessOutput {
        try await ProcessRunner.run(ProcessRunner.esctl, arguments + ["--db", db])
    }

    /// The command line of esctl with `arguments` and `--db`, as an unprivileged user when this
    /// one is root (root ignores permissions).
    func asNobody(_ arguments: [String]) -> (URL, [String]) {
        let full = arguments + ["--db", db]
        guard getuid() == 0 else { return (ProcessRunner.esctl, full) }
        return (URL(fileURLWithPath: "/usr/bin/setpriv"), ["--reuid=65534", "--regid=65534", "--clear-groups", ProcessRunner.esctl.path] + full)
    }

    /// A served store's answer to `method path`, as raw text.
    static func ask(_ port: Int, _ method: String, _ path: String, body: String = "") async throws -> String {
        let headers = body.isEmpty ? [] : ["Content-Type: application/json"]
        return try await RawConnection.exchange(port: port, RawConnection.request(method, path, headers: headers, body: body), timeout: .seconds(30))
    }

    /// The body of a raw answer, without its final line break.
    static func body(_ answer: String) -> String {
        guard let start = answer.range(of: "\r\n\r\n") else { return "" }
        return String(answer[start.upperBound...]).trimmingCharacters(in: .newlines)
    }

    /// Waits until the server at `port` holds one query waiting for its position.
    static func waitUntilWaiting(_ port: Int) async throws {
        try await withTimeout(.seconds(30), "the server to hold the query waiting for its position") {
            while try await !RawConnection.exchange(port: port, RawConnection.request("GET", "/metrics")).contains("\nhttp_waiting_queries 1") {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// Given two events, `stream-summary` caught up with the first only and `count-by-type` with both.
    func givenTwoEventsAndOneProjectionBehind() async throws -> String {
        #expect(try await esctl("append", "s", "T", "--data", #"{"n":1}"#).status == 0)
        #expect(try await esctl("query", "stream-summary").status == 0)
        #expect(try await esctl("append", "s", "U").status == 0)
        let counted = try await esctl("query", "count-by-type", "--json")
        #expect(counted.status == 0, "\(counted)")
        return counted.stdout
    }

    @Test("serve --read-only answers from caught-up projections, says how to catch up the others, waits for another process to catch them up, and answers writes 503")
    func servedReadOnlyBesideAWriter() async throws {
        let counted = try await givenTwoEventsAndOneProjectionBehind()
        // When the store is served read-only
        let serve = try RunningProcess(ProcessRunner.esctl, ["serve", "--read-only", "--port", "0", "--db", db])
        try await serve.waitForStderr(containing: "esctl: serving ")
        let port = try ServeProcessTests.port(in: serve.stderr)
        // Then /health says so, and a caught-up projection answers as esctl query did
        let health = try await Self.ask(port, "GET", "/health")
        #expect(Self.body(health) == #"{"status":"ok","head":2,"authorized":true,"readOnly":true}"#, "\(health)")
        let answered = try await Self.ask(port, "GET", "/projections/count-by-type")
        #expect(RawConnection.status(answered) == 200, "\(answered)")
        #expect(Self.body(answered) == counted.trimmingCharacters(in: .newlines), "\(answered) against \(counted)")
        // And one behind the log answers 503 with how to catch it up, changing nothing
        let behind = try await Self.ask(port, "GET", "/projections/stream-summary")
        #expect(RawConnection.status(behind) == 503, "\(behind)")
        #expect(behind.contains(#""code":"notCaughtUp""#) && behind.contains("has applied the log up to position 1 of 2"), "\(behind)")
        // And a write answers 503 and writes nothing
        let append = try await Self.ask(port, "POST", "/streams/s", body: #"[{"type":"V","data":{}}]"#)
        #expect(RawConnection.status(append) == 503, "\(append)")
        #expect(append.contains("read-only"), "\(append)")
        // When a client waits for position 2 and another process, which may write, catches it up
        let waiting = try await RawConnection.open(port: port)
        try await waiting.send(RawConnection.request("GET", "/projections/stream-summary?minPosition=2&timeout=60"))
        try await Self.waitUntilWaiting(port)
        let writerQuery = try await esctl("query", "stream-summary", "--json")
        #expect(writerQuery.status == 0, "\(writerQuery)")
        // Then the wait answers with the state the writer built
        let waited = try await waiting.waitForClose("the wait's answer once another process caught the projection up", timeout: .seconds(60))
        #expect(RawConnection.status(waited) == 200, "\(waited)")
        #expect(Self.body(waited) == writerQuery.stdout.trimmingCharacters(in: .newlines), "\(waited) against \(writerQuery)")
        let events = try await esctl("read", "s", "--json")
        #expect(events.lines.count == 2, "the read-only server appended nothing: \(events)")
        serve.send(SIGTERM)
        #expect(try await serve.waitForExit(timeout: .seconds(30)) == 0, "\(serve.stderr)")
    }

    @Test("a read-only server started before any projection was built answers once another process builds it")
    func startedBeforeTheWriter() async throws {
        // Given a store with an event and no projection built yet
        #expect(try await esctl("append", "s", "T").status == 0)
        // When it is served read-only
        let serve = try RunningProcess(ProcessRunner.esctl, ["serve", "--read-only", "--port", "0", "--db", db])
        try await serve.waitForStderr(containing: "esctl: serving ")
        let port = try ServeProcessTests.port(in: serve.stderr)
        // Then a query says the projection is behind (after waiting its second for a writer)
        let behind = try await Self.ask(port, "GET", "/projections/count-by-type")
        #expect(RawConnection.status(behind) == 503 && behind.contains("up to position 0 of 1"), "\(behind)")
        // When another process builds it while a client waits for it
        let waiting = try await RawConnection.open(port: port)
        try await waiting.send(RawConnection.request("GET", "/projections/count-by-type?minPosition=1&timeout=60"))
        try await Self.waitUntilWaiting(port)
        let built = try await esctl("query", "count-by-type", "--json")
        #expect(built.status == 0, "\(built)")
        // Then the wait and a later query answer with its state: the tables it made are found
        let waited = try await waiting.waitForClose("the wait's answer once another process built the projection", timeout: .seconds(60))
        #expect(Self.body(waited) == built.stdout.trimmingCharacters(in: .newlines), "\(waited)")
        #expect(Self.body(try await Self.ask(port, "GET", "/projections/count-by-type")) == built.stdout.trimmingCharacters(in: .newlines))
        serve.send(SIGTERM)
        #expect(try await serve.waitForExit(timeout: .seconds(30)) == 0, "\(serve.stderr)")
    }

    @Test("a store whose files this user may not write is queried and served for reading, not refused")
    func filesReadOnlyForThisUser() async throws {
        let counted = try await givenTwoEventsAndOneProjectionBehind()
        // Given its files and directory readable by all and writable by none
        chmod(directory.path, 0o755)
        for file in ["data.mdb", "lock.mdb"] { chmod(db + "/" + file, 0o444) }
        chmod(db, 0o555)
        defer {
            chmod(db, 0o700)
            for file in ["data.mdb", "lock.mdb"] { chmod(db + "/" + file, 0o600) }
        }
        // When another user queries a caught-up projection, then it answers as the writer's query did
        let (executable, caughtUp) = asNobody(["query", "count-by-type", "--json"])
        let answered = try await ProcessRunner.run(executable, caughtUp)
        #expect(answered.status == 0 && answered.stdout == counted, "\(answered)")
        let waited = try await ProcessRunner.run(executable, asNobody(["query", "count-by-type", "--min-position", "2", "--timeout", "5"]).1)
        #expect(waited.status == 0, "\(waited)")
        // And one behind the log exits 69 with how to catch it up
        let behind = try await ProcessRunner.run(executable, asNobody(["query", "stream-summary"]).1)
        #expect(behind.status == 69, "\(behind)")
        #expect(
            behind.stderr
                == "esctl: The projection 'stream-summary' has applied the log up to position 1 of 2, and the store is open read-only, so it cannot catch up here: catch it up where the store can be written (`esctl query stream-summary` or `esctl serve` there does), or ask for its state as of a position (--as-of, asOf=).\n",
            "\(behind)")
        // And a wait for a position it never reaches times out (75), as anywhere
        let timedOut = try await ProcessRunner.run(executable, asNobody(["query", "stream-summary", "--min-position", "2", "--timeout", "0.3"]).1)
        #expect(timedOut.status == 75, "\(timedOut)")
        // When it is served, then it says it serves it for reading, and writes answer 503
        let (_, serveArguments) = asNobody(["serve", "--port", "0"])
        let serve = try RunningProcess(executable, serveArguments)
        try await serve.waitForStderr(containing: "esctl: serving ")
        #expect(
            serve.stderr.contains(
                "esctl: The store at '\(db)' is read-only for this user; it can be read (esctl read, replay, export), not written. Reading it only: writes answer 503, and queries answer from the projections that are caught up.\n"),
            "\(serve.stderr)")
        #expect(
            serve.stderr.contains("esctl: warning: reading \(db) without LMDB's lock (this user may not write lock.mdb): correct only while no other process writes the store"),
            "\(serve.stderr)")
        let port = try ServeProcessTests.port(in: serve.stderr)
        let health = try await Self.ask(port, "GET", "/health")
        #expect(health.contains(#""readOnly":true"#), "\(health)")
        #expect(RawConnection.status(try await Self.ask(port, "GET", "/projections/count-by-type")) == 200)
        let append = try await Self.ask(port, "POST", "/streams/s", body: #"[{"type":"V","data":{}}]"#)
        #expect(RawConnection.status(append) == 503, "\(append)")
        serve.send(SIGTERM)
        #expect(try await serve.waitForExit(timeout: .seconds(30)) == 0, "\(serve.stderr)")
    }
}
