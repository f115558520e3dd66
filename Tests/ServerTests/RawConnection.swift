import EventStoreTesting
import Foundation
import NIOCore
import NIOPosix

/// A plain TCP connection to a server on loopback: the test writes exactly the bytes it means
/// (a forged `Host`, half a request, a half-close) and sees exactly what comes back, and when
/// the server closes.
final class RawConnection: Sendable {
    struct Received: Sendable {
        var bytes: [UInt8] = []
        /// The server closed the connection (or its side of it).
        var closed = false
    }

    private let channel: any Channel
    private let received: AwaitableState<Received>

    private init(channel: any Channel, received: AwaitableState<Received>) {
        self.channel = channel
        self.received = received
    }

    deinit { channel.close(promise: nil) }

    /// Connects to `127.0.0.1:port` within 10 s. A connection that is not `reading` never
    /// reads what the server sends (and has a small receive buffer): a client that stalled.
    static func open(port: Int, reading: Bool = true) async throws -> RawConnection {
        let received = AwaitableState(Received())
        let channel = try await withTimeout(.seconds(10), "a connection to port \(port)") {
            try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelOption(.allowRemoteHalfClosure, value: true)
                .channelOption(.autoRead, value: reading)
                .channelOption(.socketOption(.so_rcvbuf), value: reading ? 1 << 16 : 4096)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Collector(received)) }
                }
                .connect(host: "127.0.0.1", port: port).get()
        }
        return RawConnection(channel: channel, received: received)
    }

    /// Writes `text` as it is.
    func send(_ text: String) async throws {
        try await channel.writeAndFlush(ByteBuffer(string: text)).get()
    }

    /// Closes the sending side: the server reads the end of the input, as when a client leaves.
    func closeOutput() async throws {
        try await channel.close(mode: .output).get()
    }

    /// Closes the connection.
    func close() async {
        try? await channel.close().get()
    }

    /// What arrived so far, as text.
    var text: String { received.withValue { String(decoding: $0.bytes, as: UTF8.self) } }

    /// Whether the server closed the connection.
    var isClosed: Bool { received.withValue { $0.closed } }

    /// Waits until the server closes the connection and returns what it sent; throws naming
    /// `what` and what did arrive after `timeout`.
    @discardableResult
    func waitForClose(_ what: String, timeout: Duration = .seconds(10)) async throws -> String {
        do {
            try await received.wait(timeout, what) { $0.closed }
        } catch is TimeoutError {
            throw AwaitFailure(description: "Timed out after \(timeout) waiting for \(what); received: \(text.debugDescription)")
        }
        return text
    }

    /// Waits until what arrived contains `fragment` and returns it.
    @discardableResult
    func waitForText(_ fragment: String, timeout: Duration = .seconds(10)) async throws -> String {
        do {
            try await received.wait(timeout, "'\(fragment)'") { String(decoding: $0.bytes, as: UTF8.self).contains(fragment) || $0.closed }
        } catch is TimeoutError {
            throw AwaitFailure(description: "Timed out after \(timeout) waiting for '\(fragment)'; received: \(text.debugDescription)")
        }
        guard text.contains(fragment) else {
            throw AwaitFailure(description: "The server closed the connection before '\(fragment)'; received: \(text.debugDescription)")
        }
        return text
    }

    /// Sends `request` on a new connection and returns everything the server sent until it
    /// closed (the request should say `Connection: close`).
    static func exchange(port: Int, _ request: String, timeout: Duration = .seconds(10)) async throws -> String {
        let connection = try await open(port: port)
        try await connection.send(request)
        let answer = try await connection.waitForClose("the answer to \(request.prefix(60).debugDescription)", timeout: timeout)
        await connection.close()
        return answer
    }

    /// A request's text: `METHOD path HTTP/1.1`, the headers given, `Connection: close` and the
    /// body's length unless given.
    static func request(_ method: String, _ path: String, host: String? = "127.0.0.1", headers: [String] = [], body: String = "") -> String {
        var lines = ["\(method) \(path) HTTP/1.1"]
        if let host { lines.append("Host: \(host)") }
        lines += headers
        if !headers.contains(where: { $0.lowercased().hasPrefix("connection:") }) { lines.append("Connection: close") }
        if !body.isEmpty && !headers.contains(where: { $0.lowercased().hasPrefix("content-length:") || $0.lowercased().hasPrefix("transfer-encoding:") }) {
            lines.append("Content-Length: \(body.utf8.count)")
        }
        return lines.joined(separator: "\r\n") + "\r\n\r\n" + body
    }

    /// The status code of a raw answer (0 when there is none).
    static func status(_ answer: String) -> Int {
        let parts = answer.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/") else { return 0 }
        return Int(parts[1]) ?? 0
    }
}

/// Gathers what the server sends, and notes when it closes.
private final class Collector: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let received: AwaitableState<RawConnection.Received>

    init(_ received: AwaitableState<RawConnection.Received>) {
        self.received = received
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        received.update { $0.bytes.append(contentsOf: buffer.readableBytesView) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        received.update { $0.closed = true }
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            received.update { $0.closed = true }
        }
        context.fireUserInboundEventTriggered(event)
    }
}
