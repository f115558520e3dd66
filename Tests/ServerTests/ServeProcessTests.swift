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

    @Test("a stream sees another process's append, and SIGTERM with it open exits 0 within 5 s")
    func sigtermWithStreamOpen() async throws {
        // Given a store served on a free port.
        let directory = try TemporaryDirectory(prefix: "esctl-serve")
        let db = directory.appending("store")
        let initialized = try await ProcessRunner.run(ProcessRunner.esctl, ["init", "--db", db])
        #expect(initialized.status == 0, "\(initialized)")
        let serve = try RunningProcess(ProcessRunner.esctl, ["serve", "--port", "0", "--db", db])
        try await serve.waitForStderr(containing: "esctl: serving ")
        let port = try Self.port(in: serve.stderr)
        #expect(serve.stderr.contains("esctl: serving \(db) on http://127.0.0.1:\(port)\n"))
        // And a client streaming from the end.
        let stream = try await LiveResponse.open(port: port, "/subscribe", headers: [("Accept", "text/event-stream")])
        try await stream.waitForText("caughtUp") { $0 == "event: caughtUp\ndata: {\"through\":0}\n\n" }
        // When another process appends, then the stream gets it.
        let appended = try await ProcessRunner.run(ProcessRunner.esctl, ["append", "orders-1", "OrderPlaced", "--db", db])
        #expect(appended.status == 0, "\(appended)")
        try await stream.waitForText("the event esctl append wrote") { $0.contains("\nid: 1\ndata: {\"position\":1,\"stream\":\"orders-1\"") }
        // When the server gets SIGTERM, then it exits 0 and the stream ended cleanly: the graceful
        // path ended it, not the cut after the grace (ServerOptions.shutdownGrace, 4 s, then 1 s
        // of cancellation bound the stop to 5 s). Timeouts here are generous: machines are loaded.
        serve.send(SIGTERM)
        let status = try await serve.waitForExit(timeout: .seconds(30))
        #expect(status == 0, "stderr: \(serve.stderr)")
        let end = try await stream.waitForEnd("the stream to end when the server stopped", timeout: .seconds(30))
        #expect(end.failure == nil)
    }
}
