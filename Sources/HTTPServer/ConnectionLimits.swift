import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import Synchronization

/// The connections open now, against the cap: shared by every connection's
/// ``ConnectionGuardHandler`` and by the acceptor's ``ConnectionAcceptance``.
final class ConnectionGauge: Sendable {
    /// The most connections served at once (``ServerOptions/maxConnections``).
    let limit: Int
    /// Connections accepted beyond the cap only to be answered 503: past this many more, the
    /// server stops accepting and new ones wait in the kernel's backlog, costing no descriptor.
    static let refusalReserve = 32
    private let state = Mutex<(open: Int, refusing: Bool)>((0, false))
    private let logger: Logger

    init(limit: Int, logger: Logger) {
        self.limit = limit
        self.logger = logger
    }

    /// The connections open now.
    var open: Int { state.withLock { $0.open } }

    /// Counts a new connection; returns whether it is within the cap. The first one past the
    /// cap in a burst is logged.
    func opened() -> Bool {
        let (within, firstRefusal, open) = state.withLock { state -> (Bool, Bool, Int) in
            state.open += 1
            let within = state.open <= limit
            let first = !within && !state.refusing
            if !within { state.refusing = true }
            return (within, first, state.open)
        }
        if firstRefusal {
            logger.warning(
                "refusing connections with 503: \(open - 1) are open, the cap is \(limit) (--max-connections)",
                metadata: ["connections": "\(open - 1)", "limit": "\(limit)"])
        }
        return within
    }

    /// Counts a closed connection; a burst of refusals ends when the count is back under the cap.
    func closed() {
        let ended = state.withLock { state -> Bool in
            state.open -= 1
            guard state.refusing, state.open < limit else { return false }
            state.refusing = false
            return true
        }
        if ended { logger.notice("accepting connections again: under the cap of \(limit)") }
    }

    /// Whether the acceptor should take another connection (within the cap and the reserve).
    var accepting: Bool { state.withLock { $0.open } < limit + Self.refusalReserve }
}

/// Tells Hummingbird's acceptor to stop accepting while ``ConnectionGauge`` is full: beyond the
/// cap and its reserve, connections wait in the backlog instead of taking descriptors.
struct ConnectionAcceptance: AvailableConnectionsDelegate {
    let gauge: ConnectionGauge
    mutating func connectionOpened() {}
    mutating func connectionClosed() {}
    func isAcceptingNewConnections() -> Bool { gauge.accepting }
}

/// Each connection's guard, after the HTTP codec:
///
/// - Past the connection cap, the first request is answered 503 with `Retry-After` and the
///   connection is closed; the route never runs.
/// - A request's body must arrive within `bodyTimeout` of its head, or the connection is closed.
/// - After a 413, the rest of the refused body is read and dropped, up to ``drainLimit`` bytes or
///   ``drainTime``, then the connection is closed: a client that writes its whole body before
///   reading (most do) reads the 413 instead of a reset or a hang.
final class ConnectionGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
    /// The most bytes of a refused body read and dropped after a 413.
    static let drainLimit = 8 << 20
    /// The longest a refused body is drained after a 413.
    static let drainTime = TimeAmount.seconds(5)

    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let gauge: ConnectionGauge
    private let bodyTimeout: TimeAmount
    private let logger: Logger
    private var counted = false
    private var refused = false
    private var bodyDeadline: Scheduled<Void>?
    /// The current request's body has ended (or there is no request).
    private var requestEnded = true
    /// A 413 was answered: the connection closes once the refused body is drained.
    private var closingAfterRefusal = false
    /// The refused body is being drained: bytes dropped so far.
    private var drained: Int?

    init(gauge: ConnectionGauge, bodyTimeout: Duration, logger: Logger) {
        self.gauge = gauge
        self.bodyTimeout = TimeAmount(bodyTimeout)
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        counted = true
        refused = !gauge.opened()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        bodyDeadline?.cancel()
        bodyDeadline = nil
        uncount()
    }

    func channelInactive(context: ChannelHandlerContext) {
        bodyDeadline?.cancel()
        bodyDeadline = nil
        uncount()
        context.fireChannelInactive()
    }

    private func uncount() {
        guard counted else { return }
        counted = false
        gauge.closed()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if refused {
            if case .head = part { refuse(context: context) }
            return
        }
        if drained != nil {
            drain(part, context: context)
            return
        }
        switch part {
        case .head:
            requestEnded = false
            bodyDeadline?.cancel()
            let timeout = bodyTimeout
            let logger = logger
            let channel = context.channel
            bodyDeadline = context.eventLoop.scheduleTask(in: timeout) {
                logger.notice("closed a connection whose request body did not arrive within \(timeout.nanoseconds / 1_000_000_000) s")
                channel.close(promise: nil)
            }
        case .end:
            requestEnded = true
            bodyDeadline?.cancel()
            bodyDeadline = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case let .head(response) where response.status == .contentTooLarge:
            closingAfterRefusal = true
            context.write(data, promise: promise)
        case .end where closingAfterRefusal:
            let channel = context.channel
            if requestEnded {
                context.writeAndFlush(data).whenComplete { _ in channel.close(promise: nil) }
                promise?.succeed(())
                return
            }
            context.write(data, promise: promise)
            // The route did not read the body: drop it here, bounded, then close.
            drained = 0
            bodyDeadline?.cancel()
            bodyDeadline = context.eventLoop.scheduleTask(in: Self.drainTime) { channel.close(promise: nil) }
        default:
            context.write(data, promise: promise)
        }
    }

    private func drain(_ part: HTTPRequestPart, context: ChannelHandlerContext) {
        switch part {
        case let .body(buffer):
            let total = (drained ?? 0) + buffer.readableBytes
            drained = total
            if total > Self.drainLimit { context.close(promise: nil) }
        case .end, .head:
            context.close(promise: nil)
        }
    }

    private func refuse(context: ChannelHandlerContext) {
        refused = true
        let body = ByteBuffer(
            string: #"{"error":"The server has as many connections open as it serves at once (--max-connections); try again shortly.","code":"unavailable"}"#
                + "\n")
        var fields = HTTPFields()
        fields[.contentType] = "application/json; charset=utf-8"
        fields[.contentLength] = String(body.readableBytes)
        fields[.retryAfter] = "1"
        fields[.connection] = "close"
        context.write(wrapOutboundOut(.head(HTTPResponse(status: .serviceUnavailable, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}
