import EventStore
import Foundation
import HTTPServer
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("GET /metrics")
struct MetricsRouteTests {
    @Test("prints the store's, the projections' and the HTTP metrics in Prometheus' text format")
    func prometheusText() async throws {
        try await ServerFixture.with { server, client in
            // Given two events appended and one request answered
            _ = try await server.store.append(to: "chat-default", events: [NewEvent(type: "T", data: Data("{}".utf8))])
            _ = try await server.store.append(to: "other-1", events: [NewEvent(type: "T", data: Data("{}".utf8))])
            try await client.execute(uri: "/health", method: .get) { #expect($0.status == .ok) }
            // When the metrics are asked
            let text = try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/plain; version=0.0.4; charset=utf-8")
                return response.text
            }
            // Then they hold the appends, the events, the commit times, the lags and the request
            let lines = Set(text.split(separator: "\n").map(String.init))
            #expect(lines.contains("eventstore_appends_total 2"), "\(text)")
            #expect(lines.contains("eventstore_events_appended_total 2"), "\(text)")
            #expect(lines.contains { $0.hasPrefix("eventstore_commit_duration_seconds_count ") }, "\(text)")
            #expect(lines.contains("eventstore_subscriptions_open 0.0"), "\(text)")
            #expect(lines.contains(#"eventstore_projection_lag{projection="messages"} 2.0"#), "\(text)")
            #expect(lines.contains(#"http_requests_total{route="/health",method="GET",status="200"} 1"#), "\(text)")
        }
    }

    @Test("a method of a client's own invention is counted as OTHER, so series stay bounded")
    func unknownMethods() async throws {
        try await ServerFixture.with { _, client in
            // Given requests with two invented methods
            for name in ["BREW", "WHEN"] {
                let method = try #require(HTTPRequest.Method(name))
                try await client.execute(uri: "/health", method: method) { #expect($0.status.code >= 400) }
            }
            // Then the metrics count them under one method, OTHER
            let text = try await client.execute(uri: "/metrics", method: .get) { $0.text }
            #expect(!text.contains("BREW") && !text.contains("WHEN"), "\(text)")
            #expect(text.contains(#"method="OTHER""#), "\(text)")
        }
    }
}
