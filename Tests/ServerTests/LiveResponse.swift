import AsyncHTTPClient
import EventStoreTesting
import Foundation
import NIOCore

/// A streamed HTTP response read over a real socket as it arrives, by a task of its own, so a
/// test can wait (under a timeout) for the text it expects while the stream stays open.
final class LiveResponse: Sendable {
    struct Received: Sendable {
        var bytes: [UInt8] = []
        /// The body ended (cleanly when `failure` is nil).
        var ended = false
        var failure: String?
    }

    /// The status code.
    let status: UInt
    /// The response headers, by lower-case name (the last of repeated ones).
    let headers: [String: String]
    private let received = AwaitableState(Received())
    private let reader: Task<Void, Never>

    private init(_ response: HTTPClientResponse) {
        status = response.status.code
        headers = Dictionary(response.headers.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        let received = self.received
        reader = Task {
            do {
                for try await chunk in response.body {
                    received.update { $0.bytes.append(contentsOf: chunk.readableBytesView) }
                }
                received.update { $0.ended = true }
            } catch {
                received.update {
                    $0.ended = true
                    $0.failure = "\(error)"
                }
            }
        }
    }

    deinit { reader.cancel() }

    /// Sends `GET path` to the server at `port` and returns once the response head has arrived
    /// (the stream is open), within 10 s.
    static func open(
        port: Int, _ path: String, headers: [(String, String)] = [], client: HTTPClient = .shared
    ) async throws -> LiveResponse {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let sent = request
        let response = try await withTimeout(.seconds(10), "the response head of GET \(path)") {
            try await client.execute(sent, timeout: .hours(1))
        }
        return LiveResponse(response)
    }

    /// The body so far, as text.
    var text: String { received.withValue { String(decoding: $0.bytes, as: UTF8.self) } }

    /// What has been received, and whether the body ended.
    var state: Received { received.withValue { $0 } }

    /// Waits until the body so far satisfies `condition` and returns it; throws naming `what`
    /// (and what did arrive) after `timeout`, or when the body ends first.
    @discardableResult
    func waitForText(
        _ what: String, timeout: Duration = .seconds(10), until condition: @escaping @Sendable (String) -> Bool
    ) async throws -> String {
        do {
            try await received.wait(timeout, what) { condition(String(decoding: $0.bytes, as: UTF8.self)) || $0.ended }
        } catch is TimeoutError {
            throw AwaitFailure(description: "Timed out after \(timeout) waiting for \(what); received: \(text.debugDescription)")
        }
        let text = self.text
        guard condition(text) else {
            throw AwaitFailure(description: "The stream ended before \(what); received: \(text.debugDescription) \(state.failure ?? "")")
        }
        return text
    }

    /// Waits until the body is at least as long as `expected` (in bytes) and returns it.
    @discardableResult
    func waitForText(_ what: String, asLongAs expected: String, timeout: Duration = .seconds(10)) async throws -> String {
        let length = expected.utf8.count
        return try await waitForText(what, timeout: timeout) { $0.utf8.count >= length }
    }

    /// Waits until the body ends (cleanly or not) and returns what was received.
    @discardableResult
    func waitForEnd(_ what: String, timeout: Duration = .seconds(10)) async throws -> Received {
        do {
            try await received.wait(timeout, what) { $0.ended }
        } catch is TimeoutError {
            throw AwaitFailure(description: "Timed out after \(timeout) waiting for \(what); received: \(text.debugDescription)")
        }
        return state
    }
}
