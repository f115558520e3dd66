import EventStoreTesting
import Foundation
import Testing
import TestSupport

@Suite("esctl serve as a process: streams and SIGTERM")
struct ServeProcessTests {
    /// The port in `esctl: serving STORE on http://127.0.0.1:PORT`.
    static func port(in stderr: String) throws -> Int {
        let marker = "on http://127.0.0.1:"
        let range = try #require(stderr.range(of: marker), "no serving line in: \(stderr)")
        let digits = stderr[range.upperBound...].prefix { $0.isASCII && $0.isNumber }
        return try #require(Int(digits))
    }

    /// `esctl serve` on a store made at `db`, on a free port, once it says it is listening.
    static func serveFreshStore(at db: String, _ options: [String] = []) async throws -> RunningProcess {
        let initialized = try await ProcessRunner.run(ProcessRunner.esctl, ["init", "--db", db])
        #expect(initialized.status == 0, "\(initialized)")
        let serve = try RunningProcess(ProcessRunner.esctl, ["serve", "--port", "0", "--db", db] + options)
        try await serve.waitForStderr(containing: "esctl: serving ")
        return serve
    }

    @Test("a start that cannot serve says why: no store without --create (67), a port in use (69), a short or doubled token or a rebuild share out of range (64)")
    func clearStart() async throws {
        let directory = try TemporaryDirectory(prefix: "esctl-serve")
        // Given a path with no store, when serve is started on it, then it refuses and creates nothing
        let typo = directory.appending("typo")
        let missing = try await ProcessRunner.run(ProcessRunner.esctl, ["serve", "--port", "0", "--db", typo])
        #expect(missing.status == 67, "\(missing)")
        #expect(missing.stderr == "esctl: There is no store at '\(typo)'; check --db (or $ESCTL_DB), or add --create to serve a new, empty one there.\n", "\(missing)")
        #expect(!FileManager.default.fileExists(atPath: typo))
        // Given a server on a port, when a second is started on the same port, then it says the port is in use
        let db = directory.appending("store")
        let first = try await Self.serveFreshStore(at: db)
        let port = try Self.port(in: first.stderr)
        let second = try await ProcessRunner.run(ProcessRunner.esctl, ["serve", "--port", "\(port)", "--db", db])
        #expect(second.status == 69, "\(second)")
        #expect(second.stderr.hasSuffix("esctl: port \(port) is in use; stop what listens there, or give another --port (0 takes a free one).\n"), "\(second)")
        first.send(SIGTERM)
        #expect(try await first.waitForExit(timeout: .seconds(30)) == 0, "\(first.stderr)")
        // And a short token, or two of them, are refused before anything opens
        let short = try await ProcessRunner.run(ProcessRunner.esctl, ["serve", "--port", "0", "--token", "short", "--db", db])
        #expect(short.status == 64 && short.stderr.contains("at least 16"), "\(short)")
        let tokenFile = directory.appending("token")
        try "0123456789abcdef0123\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let both = try await ProcessRunner.run(
            ProcessRunner.esctl, ["serve", "--port", "0", "--token", "0123456789abcdef", "--token-file", tokenFile, "--db", db])
        #expect(both.status == 64 && both.stderr.contains("not both"), "\(both)")
        // And a rebuild's share of a core outside 0.01 to 1 is refused before anything opens
        for share in ["0", "0.001", "1.5", "half", "nan"] {
            let refused = try await ProcessRunner.run(ProcessRunner.esctl, ["serve", "--port", "0", "--rebuild-share", share, "--db", db])
            #expect(refused.status == 64, "--rebuild-share \(share): \(refused)")
            #expect(refused.stderr.contains("--rebuild-share takes a number from 0.01 to 1; '\(share)' is not one."), "\(refused)")
        }
        // And a token from a file guards the routes (served with a rebuild share of a quarter core, which rebuilds)
        let guarded = try RunningProcess(
            ProcessRunner.esctl, ["serve", "--port", "0", "--token-file", tokenFile, "--rebuild-share", "0.25", "--db", db])
        try await guarded.waitForStderr(containing: "esctl: serving ")
        let guardedPort = try Self.port(in: guarded.stderr)
        let refused = try await RawConnection.exchange(port: guardedPort, RawConnection.request("GET", "/stats"))
        #expect(RawConnection.status(refused) == 401, "\(refused)")
        let served = try await RawConnection.exchange(
            port: guardedPort, RawConnection.request("GET", "/stats", headers: ["Authorization: Bearer 0123456789abcdef0123"]))
        #expect(RawConnection.status(served) == 200, "\(served)")
        let rebuilt = try await RawConnection.exchange(
            port: guardedPort,
            RawConnection.request(
                "POST", "/projections/count-by-type/rebuild", headers: ["Authorization: Bearer 0123456789abcdef0123", "Content-Length: 0"]))
        #expect(RawConnection.status(rebuilt) == 200 && rebuilt.contains("\"name\":\"count-by-type\""), "\(rebuilt)")
        guarded.send(SIGTERM)
        #expect(try await guarded.waitForExit(timeout: .seconds(30)) == 0, "\(guarded.stderr)")
    }

    @Test("a host that is not loopback without a token is refused with one sentence and exit 64, creating nothing")
    func nonLoopbackWithoutToken() async throws {
        // Given no token in the environment, when serve is asked to listen on every interface
        let directory = try TemporaryDirectory(prefix: "esctl-serve")
        let db = directory.appending("store")
        let refused = try await ProcessRunner.run(
            ProcessRunner.esctl, ["serve", "--host", "0.0.0.0", "--port", "0", "--db", db], environment: ["ESCTL_TOKEN": ""])
        // Then it refuses before opening anything
        #expect(refused.status == 64, "\(refused)")
        #expect(
            refused.stderr
                == "esctl: Serving on '0.0.0.0', which is not loopback, needs a token: give --token (or $ESCTL_TOKEN), or serve on 127.0.0.1.\n",
            "\(refused)")
        #expect(!FileManager.default.fileExists(atPath: db))
        // And with a token it starts (and stops on SIGTERM with 0)
        let serve = try RunningProcess(ProcessRunner.esctl, ["serve", "--host", "0.0.0.0", "--port", "0", "--token", "t-0123456789abcdef", "--create", "--db", db])
        try await serve.waitForStderr(containing: "esctl: serving ")
        serve.send(SIGTERM)
        #expect(try await serve.waitForExit(timeout: .seconds(30)) == 0, "\(serve.stderr)")
    }

    @Test("a stream sees another process's append, and SIGTERM with it open exits 0")
    func sigtermWithStreamOpen() async throws {
        // Given a store served on a free port.
        let directory = try TemporaryDirectory(prefix: "esctl-serve")
        let db = directory.appending("store")
        // (a grace of 30 s: the graceful path ends the stream at once, and a server a loaded
        // machine starves past the default 4 s would cut it instead)
        let serve = try await Self.serveFreshStore(at: db, ["--grace", "30"])
        let port = try Self.port(in: serve.stderr)
        #expect(serve.stderr.contains("esctl: serving \(db) on http://127.0.0.1:\(port)\n"))
        #expect(!serve.stderr.contains("HummingbirdCore"), "Hummingbird's own start line repeats esctl's: \(serve.stderr)")
        // And a client streaming from the end.
        let stream = try await LiveResponse.open(port: port, "/subscribe", headers: [("Accept", "text/event-stream")])
        try await stream.waitForText("caughtUp") { $0 == "event: caughtUp\ndata: {\"through\":0}\n\n" }
        // When another process appends, then the stream gets it.
        let appended = try await ProcessRunner.run(ProcessRunner.esctl, ["append", "orders-1", "OrderPlaced", "--db", db])
        #expect(appended.status == 0, "\(appended)")
        try await stream.waitForText("the event esctl append wrote") { $0.contains("\nid: 1\ndata: {\"position\":1,\"stream\":\"orders-1\"") }
        // When the server gets SIGTERM, then it exits 0 and the stream ended cleanly: the graceful
        // path ended it, not the cut after the grace (--grace, 30 s here, then 1 s of cancellation
        // bound the stop). Timeouts here are generous: machines are loaded.
        serve.send(SIGTERM)
        let status = try await serve.waitForExit(timeout: .seconds(60))
        #expect(status == 0, "stderr: \(serve.stderr)")
        let end = try await stream.waitForEnd("the stream to end when the server stopped", timeout: .seconds(60))
        #expect(end.failure == nil)
    }

    @Test("at SIGTERM a pending wait answers 503 at once, a request still unanswered when the grace ends answers 503 (not an empty reply), and serve exits 0")
    func stopAnswersEveryRequest() async throws {
        // Given a store served with a grace of 2 s
        let directory = try TemporaryDirectory(prefix: "esctl-serve")
        let db = directory.appending("store")
        #expect(try await ProcessRunner.run(ProcessRunner.esctl, ["init", "--db", db]).status == 0)
        let serve = try RunningProcess(ProcessRunner.esctl, ["serve", "--port", "0", "--db", db, "--grace", "2"])
        try await serve.waitForStderr(containing: "esctl: serving ")
        let port = try Self.port(in: serve.stderr)
        // And a query waiting for a position far ahead, and an append whose body never comes
        let waiting = try await RawConnection.open(port: port)
        try await waiting.send(RawConnection.request("GET", "/projections/count-by-type?minPosition=1000&timeout=300"))
        let unfinished = try await RawConnection.open(port: port)
        try await unfinished.send(
            "POST /streams/orders-1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n[")
        // (/metrics counts the waits and the requests in flight: its own, the wait, the append)
        var metrics = ""
        for _ in 0..<300 {
            metrics = try await RawConnection.exchange(port: port, RawConnection.request("GET", "/metrics"))
            if metrics.contains("\nhttp_waiting_queries 1") && metrics.contains("\nhttp_requests_in_flight 3") { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        try #require(
            metrics.contains("\nhttp_waiting_queries 1") && metrics.contains("\nhttp_requests_in_flight 3"),
            "the server never held the wait and the unfinished append: \(metrics.suffix(600))")
        // When it gets SIGTERM
        serve.send(SIGTERM)
        // Then the wait is answered 503 at once (not when its 300 s or the grace run out)
        let waitAnswer = try await waiting.waitForClose("the wait's answer at the stop", timeout: .seconds(30))
        #expect(RawConnection.status(waitAnswer) == 503, "\(waitAnswer)")
        #expect(waitAnswer.contains(#""code":"unavailable""#), "\(waitAnswer)")
        // And the append cut at the end of the grace is answered 503 too, with nothing written
        let cutAnswer = try await unfinished.waitForClose("the unfinished append's answer at the end of the grace", timeout: .seconds(30))
        #expect(RawConnection.status(cutAnswer) == 503, "\(cutAnswer)")
        #expect(cutAnswer.contains("did not answer this request"), "\(cutAnswer)")
        #expect(try await serve.waitForExit(timeout: .seconds(30)) == 0, "stderr: \(serve.stderr)")
        let stats = try await ProcessRunner.run(ProcessRunner.esctl, ["stats", "--json", "--db", db])
        #expect(stats.stdout.contains(#""headPosition":0"#), "\(stats)")
    }

    @Test("serve --tls-cert --tls-key says it serves https, with no clear-text warning even off loopback; a certificate without its key exits 64")
    func servesTLS() async throws {
        // Given a store and the test certificate
        let directory = try TemporaryDirectory(prefix: "esctl-serve")
        let db = directory.appending("store")
        let files = try TestCertificate.write(to: directory)
        let tokenFile = directory.appending("token")
        try "a-token-for-the-tls-test-0123\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        #expect(try await ProcessRunner.run(ProcessRunner.esctl, ["init", "--db", db]).status == 0)
        // When serve is given the certificate and its key on every address, with a token
        let serve = try RunningProcess(
            ProcessRunner.esctl,
            ["serve", "--port", "0", "--db", db, "--host", "0.0.0.0", "--token-file", tokenFile, "--tls-cert", files.certificate, "--tls-key", files.key])
        try await serve.waitForStderr(containing: "esctl: serving ")
        // Then it says https, and does not warn of clear text
        #expect(serve.stderr.contains(" on https://0.0.0.0:"), "\(serve.stderr)")
        #expect(!serve.stderr.contains("without TLS"), "\(serve.stderr)")
        serve.send(SIGTERM)
        #expect(try await serve.waitForExit(timeout: .seconds(30)) == 0, "\(serve.stderr)")
        // And a certificate without its key is refused before anything binds
        let alone = try await ProcessRunner.run(ProcessRunner.esctl, ["serve", "--port", "0", "--db", db, "--tls-cert", files.certificate])
        #expect(alone.status == 64 && alone.stderr.contains("--tls-cert and --tls-key together"), "\(alone)")
    }

    @Test("serve keeps every projection caught up as commits arrive, with no query asking")
    func projectionsFollowCommits() async throws {
        // Given a store served on a free port.
        let directory = try TemporaryDirectory(prefix: "esctl-serve")
        let db = directory.appending("store")
        let serve = try await Self.serveFreshStore(at: db)
        // When another process appends.
        let appended = try await ProcessRunner.run(ProcessRunner.esctl, ["append", "orders-1", "OrderPlaced", "--db", db])
        #expect(appended.status == 0, "\(appended)")
        // Then every projection's stored checkpoint reaches it (`esctl projections` reports them as
        // they stand, catching nothing up itself), within a bound.
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        var checkpoints: [String: Int] = [:]
        while ContinuousClock.now < deadline {
            let listed = try await ProcessRunner.run(ProcessRunner.esctl, ["projections", "--json", "--db", db])
            #expect(listed.status == 0, "\(listed)")
            checkpoints = [:]
            for line in listed.stdout.split(separator: "\n") {
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
                if let name = object["name"] as? String { checkpoints[name] = object["checkpoint"] as? Int }
            }
            if !checkpoints.isEmpty && checkpoints.values.allSatisfy({ $0 == 1 }) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(checkpoints.count >= 5 && checkpoints.values.allSatisfy { $0 == 1 }, "the projections never caught up with the append: \(checkpoints)")
        serve.send(SIGTERM)
        #expect(try await serve.waitForExit(timeout: .seconds(30)) == 0, "\(serve.stderr)")
    }
}

@Suite("esctl serve --apps: the apps a server carries")
struct ServeAppsTests {
    @Test("serve --apps none serves the generic API only: no app's command, chat protocol or read model; an unknown app exits 64")
    func servesNoApp() async throws {
        // Given a store, served with --apps none.
        let directory = try TemporaryDirectory(prefix: "esctl-serve-apps")
        let db = directory.appending("store")
        let initialized = try await ProcessRunner.run(ProcessRunner.esctl, ["init", "--db", db])
        #expect(initialized.status == 0, "\(initialized)")
        let serve = try RunningProcess(ProcessRunner.esctl, ["serve", "--port", "0", "--apps", "none", "--db", db])
        try await serve.waitForStderr(containing: "esctl: serving ")
        let port = try ServeProcessTests.port(in: serve.stderr)
        // When an app's command, the chat protocol and the projections are asked for.
        let say = try await RawConnection.exchange(
            port: port, RawConnection.request("POST", "/apps/chat/say", headers: ["Content-Type: application/json"], body: #"{"user":"u","text":"hi"}"#))
        let room = try await RawConnection.exchange(port: port, RawConnection.request("GET", "/chat/room?ann"))
        let press = try await RawConnection.exchange(
            port: port, RawConnection.request("POST", "/apps/color/press", headers: ["Content-Type: application/json"], body: #"{"key":"A"}"#))
        let projections = try await RawConnection.exchange(port: port, RawConnection.request("GET", "/projections"))
        // Then the apps' routes do not exist, and only the log summaries are registered.
        #expect(RawConnection.status(say) == 404, "\(say)")
        #expect(RawConnection.status(room) == 404, "\(room)")
        #expect(RawConnection.status(press) == 404, "\(press)")
        #expect(RawConnection.status(projections) == 200, "\(projections)")
        #expect(projections.contains(#""name":"count-by-type""#) && projections.contains(#""name":"stream-summary""#), "\(projections)")
        #expect(!projections.contains(#""name":"messages""#) && !projections.contains(#""name":"app-state""#), "\(projections)")
        serve.send(SIGTERM)
        #expect(try await serve.waitForExit(timeout: .seconds(30)) == 0, "\(serve.stderr)")

        // And an app that is not built in is refused before anything is served.
        let unknown = try await ProcessRunner.run(ProcessRunner.esctl, ["serve", "--port", "0", "--apps", "chat,nope", "--db", db])
        #expect(unknown.status == 64, "\(unknown)")
        #expect(
            unknown.stderr == "esctl: There is no app named 'nope'; the apps built in are fitness, chat, campground and color, or give all or none.\n",
            "\(unknown)")
    }
}
