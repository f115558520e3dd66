import EventStore
import EventStoreTesting
import Foundation
import HTTPServer
import HummingbirdTesting
import Testing
import TestSupport

/// The server as a hostile web page or a greedy client would try it: each test failed before
/// the server guarded against what it does.
@Suite("the server under attack: other sites' pages, forged hosts, held connections")
struct UnderAttackTests {
    static func port(_ client: any TestClientProtocol) throws -> Int {
        try #require(client.port, "the live test client has a port")
    }

    /// The connections open once the test client's own keep-alive connection is: a request
    /// through it makes sure it is counted.
    static func baseline(_ server: Server, _ client: any TestClientProtocol) async throws -> Int {
        try await client.execute(uri: "/health", method: .get) { #expect($0.status == .ok) }
        return server.openConnections
    }

    @Test("a page of another site cannot write: a foreign Origin gets 403, a form's content type 415, an <img> 403; nothing is written")
    func noWriteFromAnotherSite() async throws {
        try await ServerFixture.with(testing: .live) { server, client in
            let port = try Self.port(client)
            let body = #"[{"type":"Placed"}]"#
            // Given requests as a page on another origin would send them
            let forged = [
                ("a form's text/plain body", RawConnection.request("POST", "/streams/orders-1", headers: ["Content-Type: text/plain"], body: body), 415),
                ("a form's urlencoded body", RawConnection.request("POST", "/streams/orders-1", headers: ["Content-Type: application/x-www-form-urlencoded"], body: body), 415),
                ("a form's text/plain chat message", RawConnection.request("POST", "/chat/say", headers: ["Content-Type: text/plain"], body: #"{"user":"x","message":"hi"}"#), 415),
                ("a form's chat message from another origin", RawConnection.request("POST", "/chat/say", headers: ["Origin: http://evil.example", "Content-Type: application/x-www-form-urlencoded"], body: #"{"user":"x","message":"hi"}"#), 403),
                ("a fetch from another origin", RawConnection.request("POST", "/streams/orders-1", headers: ["Origin: http://evil.example", "Content-Type: application/json"], body: body), 403),
                ("a purge from another origin", RawConnection.request("POST", "/purge", headers: ["Origin: http://evil.example"]), 403),
                ("a forget from another origin", RawConnection.request("POST", "/subjects/camper:C1/forget", headers: ["Origin: null"]), 403),
                ("an <img> of the chat room", RawConnection.request("GET", "/chat/room?x", headers: ["Sec-Fetch-Site: cross-site", "Sec-Fetch-Dest: image"]), 403),
                ("an <img> from another port", RawConnection.request("GET", "/chat/room?x", headers: ["Sec-Fetch-Site: same-site"]), 403),
                ("a read from a rebinding page", RawConnection.request("GET", "/events", host: "rebind.evil.example:\(port)"), 421),
                ("a write from a rebinding page", RawConnection.request("POST", "/streams/orders-1", host: "rebind.evil.example", headers: ["Content-Type: application/json"], body: body), 421),
                ("a host that only starts like loopback", RawConnection.request("GET", "/events", host: "127.evil.example"), 421),
            ]
            for (what, request, status) in forged {
                // When each is sent, then it is refused with the JSON error
                let answer = try await RawConnection.exchange(port: port, request)
                #expect(RawConnection.status(answer) == status, "\(what): \(answer)")
                #expect(answer.contains(#""code":"#), "\(what): \(answer)")
            }
            // And nothing was written
            #expect(try await server.store.headPosition() == 0)
        }
    }

    @Test("the server's own pages, programs and allowed names still write and read")
    func ownPagesAndProgramsServed() async throws {
        var options = ServerOptions(port: 0)
        options.allowedOrigins = ["https://app.example"]
        options.allowedHosts = ["proxy.example"]
        try await ServerFixture.with(options: options, testing: .live) { server, client in
            let port = try Self.port(client)
            let body = #"[{"type":"Placed"}]"#
            let allowed = [
                ("a program without a content type", RawConnection.request("POST", "/streams/orders-1", body: body), 201),
                ("JSON with a charset", RawConnection.request("POST", "/streams/orders-1", headers: ["Content-Type: application/json; charset=utf-8"], body: body), 201),
                ("the console, same origin", RawConnection.request("POST", "/streams/orders-1", host: "localhost:\(port)", headers: ["Origin: http://localhost:\(port)", "Sec-Fetch-Site: same-origin", "Content-Type: application/json"], body: body), 201),
                ("the console behind a TLS proxy of the same name", RawConnection.request("POST", "/streams/orders-1", host: "localhost", headers: ["Origin: https://localhost", "Content-Type: application/json"], body: body), 201),
                ("an allowed origin", RawConnection.request("POST", "/streams/orders-1", headers: ["Origin: https://app.example", "Content-Type: application/json"], body: body), 201),
                ("an allowed host", RawConnection.request("GET", "/stats", host: "proxy.example:443"), 200),
                ("IPv6 loopback by address", RawConnection.request("GET", "/stats", host: "[::1]:\(port)"), 200),
                ("no Host (HTTP/1.0 style)", RawConnection.request("GET", "/stats", host: nil), 200),
                ("a link to the console from another site", RawConnection.request("GET", "/", headers: ["Sec-Fetch-Site: cross-site"]), 200),
                ("a typed URL", RawConnection.request("GET", "/stats", headers: ["Sec-Fetch-Site: none"]), 200),
                ("the original chat client's POST (URLSession labels JSON as a form)", RawConnection.request(
                    "POST", "/chat/say", headers: ["Content-Type: application/x-www-form-urlencoded"],
                    body: #"{"id":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","user":"ann lee","message":"hi","date":0}"#), 200),
            ]
            for (what, request, status) in allowed {
                let answer = try await RawConnection.exchange(port: port, request)
                #expect(RawConnection.status(answer) == status, "\(what): \(answer)")
            }
            #expect(try await server.store.headPosition() == 6)
        }
    }

    @Test("a wait whose client leaves ends at once and frees its connection")
    func waitEndsWhenClientLeaves() async throws {
        try await ServerFixture.with(testing: .live) { server, client in
            let port = try Self.port(client)
            let baseline = try await Self.baseline(server, client)
            // Given a client waiting for a position far ahead (up to 300 s)
            let connection = try await RawConnection.open(port: port)
            try await connection.send(RawConnection.request("GET", "/projections/count-by-type?minPosition=1000&timeout=300"))
            try await waitUntil("the server to count the waiting connection (\(server.openConnections) open)") { server.openConnections == baseline + 1 }
            // When it leaves (closes its side, as a dropped client does)
            try await connection.closeOutput()
            // Then the server closes the connection without waiting out the 300 s
            try await connection.waitForClose("the server to close the connection of a client that left")
            try await waitUntil("the server to forget the connection") { server.openConnections == baseline }
        }
    }

    @Test("a client that sends its request and closes its side still reads the answer (nc -N, scripted sockets)")
    func halfCloseStillAnswered() async throws {
        try await ServerFixture.with(testing: .live) { server, client in
            let port = try Self.port(client)
            let connection = try await RawConnection.open(port: port)
            try await connection.send(RawConnection.request("POST", "/streams/orders-1", body: #"[{"type":"Placed"}]"#))
            try await connection.closeOutput()
            let answer = try await connection.waitForClose("the answer to an append whose client closed its side")
            #expect(RawConnection.status(answer) == 201, "\(answer)")
            #expect(try await server.store.headPosition() == 1)
        }
    }

    @Test("past --max-connections, new connections get 503 with Retry-After, and are served again once others close")
    func connectionCap() async throws {
        var options = ServerOptions(port: 0)
        options.maxConnections = 3
        try await ServerFixture.with(options: options, testing: .live) { server, client in
            let port = try Self.port(client)
            let baseline = try await Self.baseline(server, client)
            #expect(baseline == 1, "the test client's own connection")
            // Given two idle connections beside the test client's: the cap
            let held = [try await RawConnection.open(port: port), try await RawConnection.open(port: port)]
            try await waitUntil("the server to count both held connections") { server.openConnections == 3 }
            // When a third asks for something, then it is refused with 503 and Retry-After
            let refused = try await RawConnection.exchange(port: port, RawConnection.request("GET", "/health"))
            #expect(RawConnection.status(refused) == 503, "\(refused)")
            #expect(refused.lowercased().contains("retry-after: 1"), "\(refused)")
            #expect(refused.contains(#""code":"unavailable""#), "\(refused)")
            // And once one held connection closes, a new one is served
            await held[0].close()
            try await waitUntil("the server to forget the closed connection (\(server.openConnections) open)") { server.openConnections == 2 }
            let served = try await RawConnection.exchange(port: port, RawConnection.request("GET", "/health"))
            #expect(RawConnection.status(served) == 200, "\(served)")
            await held[1].close()
        }
    }

    @Test("a connection cap the descriptor limit cannot hold is refused at start, not met as a crash under load")
    func capBeyondDescriptors() async throws {
        var options = ServerOptions(port: 0)
        options.maxConnections = 1_000_000_000
        let error = await #expect(throws: ServerError.self) {
            try await ServerFixture.with(options: options) { _, _ in }
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains("ulimit -n") == true, "\(String(describing: error))")
    }

    @Test("an idle connection, or one that never finishes its headers, is closed after the idle timeout; an unfinished body gets 408 first")
    func idleAndSlowHeaders() async throws {
        var options = ServerOptions(port: 0)
        options.idleTimeout = .seconds(1)
        try await ServerFixture.with(options: options, testing: .live) { server, client in
            let port = try Self.port(client)
            // Given a connection that sends nothing, and one that sends half a head
            let idle = try await RawConnection.open(port: port)
            let slow = try await RawConnection.open(port: port)
            try await slow.send("GET /stats HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            // Then the server closes each (the waits are failure detectors; the timeout is 1 s)
            try await idle.waitForClose("the server to close an idle connection")
            try await slow.waitForClose("the server to close a connection with unfinished headers")
            try await waitUntil("the server to forget the closed connections (\(server.openConnections) open)") { server.openConnections <= 1 }
        }
        // Given a body timeout of 1 s, and an idle timeout long enough that a loaded machine
        // reads the request's head before it (it counts from the connection's start)
        options.idleTimeout = .seconds(60)
        options.bodyTimeout = .seconds(1)
        try await ServerFixture.with(options: options, testing: .live) { server, client in
            let port = try Self.port(client)
            // When a connection sends half a body
            let body = try await RawConnection.open(port: port)
            try await body.send(RawConnection.request("POST", "/streams/s-1", headers: ["Content-Length: 100", "Connection: keep-alive"]) + "[")
            // Then the server closes it, answering 408, not an empty reply
            let bodyAnswer = try await body.waitForClose("the server to close a connection with an unfinished body", timeout: .seconds(30))
            #expect(RawConnection.status(bodyAnswer) == 408, "\(bodyAnswer)")
            #expect(bodyAnswer.contains(#""code":"requestTimeout""#), "\(bodyAnswer)")
            try await waitUntil("the server to forget the closed connection (\(server.openConnections) open)") { server.openConnections <= 1 }
            #expect(try await server.store.headPosition() == 0)
        }
    }
}

extension UnderAttackTests {
    @Test("a body over --max-body answers 413 with the JSON error, chunked or not, and a client that writes it all first reads the 413")
    func oversizedBodies() async throws {
        var options = ServerOptions(port: 0)
        options.maxBodyBytes = 100
        try await ServerFixture.with(options: options, testing: .live) { server, client in
            let port = try Self.port(client)
            let big = "[" + String(repeating: #"{"type":"Placed"},"#, count: 30) + #"{"type":"Placed"}]"#
            // Given a chunked body over the limit, in chunks of 64 bytes
            var chunked = ""
            var rest = Substring(big)
            while !rest.isEmpty {
                let chunk = rest.prefix(64)
                chunked += String(chunk.utf8.count, radix: 16) + "\r\n" + chunk + "\r\n"
                rest = rest.dropFirst(chunk.count)
            }
            chunked += "0\r\n\r\n"
            for (what, path) in [("an append", "/streams/orders-1"), ("a batch", "/append"), ("an app command", "/apps/color/press")] {
                let answer = try await RawConnection.exchange(
                    port: port, RawConnection.request("POST", path, headers: ["Transfer-Encoding: chunked", "Content-Type: application/json"]) + chunked)
                #expect(RawConnection.status(answer) == 413, "\(what), chunked: \(answer)")
                #expect(answer.contains(#""code":"payloadTooLarge""#), "\(what), chunked: \(answer)")
            }
            // And with a Content-Length over the limit, sent whole before reading
            let fixed = try await RawConnection.exchange(port: port, RawConnection.request("POST", "/streams/orders-1", body: big))
            #expect(RawConnection.status(fixed) == 413, "\(fixed)")
            // And with 2 MB, more than the sockets' buffers hold: the server reads it to the end
            let huge = "[" + String(repeating: " ", count: 2 << 20) + "]"
            let drained = try await RawConnection.exchange(port: port, RawConnection.request("POST", "/streams/orders-1", headers: ["Connection: keep-alive"], body: huge))
            #expect(RawConnection.status(drained) == 413, "\(drained.prefix(300))")
            #expect(drained.contains(#""code":"payloadTooLarge""#), "\(drained.prefix(300))")
            // And with 6 MB and Connection: close, where the server closes once it has answered:
            // it reads the body to the end first, or the close with data unread resets the client
            let whole = "[" + String(repeating: " ", count: 6 << 20) + "]"
            for attempt in 1...3 {
                let closing = try await RawConnection.exchange(port: port, RawConnection.request("POST", "/streams/orders-1", body: whole))
                #expect(RawConnection.status(closing) == 413, "attempt \(attempt): \(closing.prefix(300))")
            }
            #expect(try await server.store.headPosition() == 0)
        }
    }
}

extension UnderAttackTests {
    @Test("HEAD on a GET route that reads answers the GET's status and length with no body; the chat room's HEAD records nothing")
    func headRequests() async throws {
        try await ServerFixture.with(testing: .live) { server, client in
            let port = try Self.port(client)
            for path in ["/health", "/stats", "/openapi.yaml", "/", "/projections/count-by-type"] {
                let get = try await RawConnection.exchange(port: port, RawConnection.request("GET", path))
                let head = try await RawConnection.exchange(port: port, RawConnection.request("HEAD", path))
                #expect(RawConnection.status(head) == RawConnection.status(get) && RawConnection.status(get) == 200, "HEAD \(path): \(head) GET: \(get.prefix(300))")
                let getLength = get.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                let headLength = head.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                #expect(headLength != nil && headLength == getLength, "HEAD \(path): \(head)")
                #expect(head.hasSuffix("\r\n\r\n"), "HEAD \(path) has no body: \(head)")
            }
            let room = try await RawConnection.exchange(port: port, RawConnection.request("HEAD", "/chat/room?ann"))
            #expect(RawConnection.status(room) == 405, "\(room)")
            #expect(try await server.store.headPosition() == 0)
        }
    }
}

extension UnderAttackTests {
    @Test("wrong tokens are slowed per address: after 10 in a minute, 429 with Retry-After, even for the right token; requests without one are not counted; /health still answers")
    func wrongTokensThrottled() async throws {
        let token = "the-right-token-0123456789"
        try await ServerFixture.with(options: ServerOptions(port: 0, token: token), testing: .live) { _, client in
            let port = try Self.port(client)
            // Given twenty requests without a token (not guesses: they are not counted)
            for _ in 0..<20 {
                let answer = try await RawConnection.exchange(port: port, RawConnection.request("GET", "/events"))
                #expect(RawConnection.status(answer) == 401, "\(answer)")
            }
            // And ten guesses, through the header and through POST /session
            for guess in 0..<10 {
                let request =
                    guess % 2 == 0
                    ? RawConnection.request("GET", "/events", headers: ["Authorization: Bearer guess-\(guess)-0123456789"])
                    : RawConnection.request("POST", "/session", headers: ["Content-Type: application/json"], body: #"{"token":"guess-0123456789"}"#)
                let answer = try await RawConnection.exchange(port: port, request)
                #expect(RawConnection.status(answer) == 401, "guess \(guess): \(answer)")
            }
            // When the address tries again, even with the right token
            for request in [
                RawConnection.request("GET", "/events", headers: ["Authorization: Bearer \(token)"]),
                RawConnection.request("POST", "/session", headers: ["Authorization: Bearer \(token)"]),
            ] {
                // Then it is refused with 429 and told when to come back
                let answer = try await RawConnection.exchange(port: port, request)
                #expect(RawConnection.status(answer) == 429, "\(answer)")
                #expect(answer.lowercased().contains("retry-after: 60"), "\(answer)")
                #expect(answer.contains(#""code":"tooManyRequests""#), "\(answer)")
            }
            // And the open routes still answer
            #expect(RawConnection.status(try await RawConnection.exchange(port: port, RawConnection.request("GET", "/health"))) == 200)
        }
    }
}

extension UnderAttackTests {
    @Test("guesses whose bodies arrive together are each checked and counted in one step: ten get 401, the rest 429")
    func concurrentGuesses() async throws {
        let token = "the-right-token-0123456789"
        try await ServerFixture.with(options: ServerOptions(port: 0, token: token), testing: .live) { _, client in
            let port = try Self.port(client)
            // Given twenty POST /session guesses whose heads have reached the route and whose bodies lack their last byte
            let body = #"{"token":"guess-0123456789"}"#
            var guesses: [RawConnection] = []
            for _ in 0..<20 {
                let guess = try await RawConnection.open(port: port)
                try await guess.send(
                    RawConnection.request("POST", "/session", headers: ["Content-Type: application/json", "Content-Length: \(body.utf8.count)"])
                        + String(body.dropLast()))
                guesses.append(guess)
            }
            let metrics = RawConnection.request("GET", "/metrics", headers: ["Authorization: Bearer \(token)"])
            try await withTimeout(.seconds(30), "the twenty guesses to reach the route") {
                while try await !RawConnection.exchange(port: port, metrics).contains("\nhttp_requests_in_flight 21") {
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            // When their bodies end together
            for guess in guesses { try await guess.send("}") }
            // Then ten are told the token is wrong and the others are refused for guessing too much
            var statuses: [Int] = []
            for guess in guesses {
                statuses.append(RawConnection.status(try await guess.waitForClose("the answer to a guess", timeout: .seconds(30))))
            }
            // (ten wrong tokens a minute: TokenThrottle.allowedFailures)
            #expect(statuses.filter { $0 == 401 }.count == 10, "\(statuses)")
            #expect(statuses.filter { $0 == 429 }.count == 10, "\(statuses)")
        }
    }

    @Test("an HTTP/1.0 request is answered and its connection closed; with Connection: keep-alive it stays open for the next")
    func http10Closed() async throws {
        try await ServerFixture.with(testing: .live) { _, client in
            let port = try Self.port(client)
            // Given an HTTP/1.0 request without keep-alive
            let plain = try await RawConnection.open(port: port)
            try await plain.send("GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            // Then it is answered and the server closes the connection (well before the idle timeout)
            let answer = try await plain.waitForClose("the server to close an HTTP/1.0 connection after its answer")
            #expect(RawConnection.status(answer) == 200, "\(answer)")
            // And one that asks to keep the connection is answered twice on it
            let kept = try await RawConnection.open(port: port)
            try await kept.send("GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n")
            try await kept.waitForText("\"status\"")
            #expect(!kept.isClosed)
            try await kept.send("GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            let both = try await kept.waitForClose("the second answer on a kept HTTP/1.0 connection")
            #expect(both.components(separatedBy: "HTTP/1.1 200").count == 3, "\(both)")
        }
    }
}
