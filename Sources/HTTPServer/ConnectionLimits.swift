import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import Synchronization
import WireFormat

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
/// - An HTTP/1.0 request without keep-alive closes the connection after its answer
///   (``HTTP10Close``, installed before the HTTP-types codec).
/// - Past the connection cap, the first request is answered 503 with `Retry-After` and the
///   connection is closed; the route never runs.
/// - A request's body must arrive within `bodyTimeout` of its head, or the connection is closed.
///   A route that streams its body (`POST /append/stream`, whose lines are appends for as long as
///   the client sends them) has each part within `bodyTimeout` of the one before, or of the
///   server's last answer, instead.
/// - A connection that leaves what is written untaken for `stallTimeout` (its socket's buffers
///   full the whole time) is closed: a client that stopped reading holds no memory for long.
/// - A request the connection closes on before its answer began (the server stopping, the end
///   of the grace, the body timeout) is answered 503 (408 for the body timeout) with the JSON
///   error, not an empty reply: the client knows the request was not answered.
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
    private let stallTimeout: TimeAmount
    /// Whether the server is stopping: what an unanswered request is told when it is cut.
    private let stopSignal: StopSignal
    private let logger: Logger
    /// The routes whose body is a stream with no end in sight (``Server/streamingBodyRoutes``).
    private let streamingRoutes: RoutePatterns
    /// The current request's route streams its body: each part moves the body deadline on.
    private var bodyStreams = false
    private var stallDeadline: Scheduled<Void>?
    private var counted = false
    private var refused = false
    private var bodyDeadline: Scheduled<Void>?
    /// The current request's body has ended (or there is no request).
    private var requestEnded = true
    /// Request heads read whose answers' heads have not been written (more than one when a
    /// client pipelines).
    private var answersPending = 0
    /// An answer's head was written and its end not yet (a stream may run for hours).
    private var answerInProgress = false
    /// The guard wrote the connection's last answer itself: what the routes write later is
    /// dropped, so a client never reads two answers to one request.
    private var answeredByGuard = false
    /// The body timeout fired: the close it asks for answers 408.
    private var bodyTimedOut = false
    /// A 413 was answered: the connection closes once the refused body is drained.
    private var closingAfterRefusal = false
    /// The refused body is being drained: bytes dropped so far.
    private var drained: Int?
    /// When the drain gives up (``drainTime`` after the 413).
    private var drainDeadline: NIODeadline?
    /// A close asked for while draining (Hummingbird closes a connection whose request body the
    /// route left unread): done once the drain ends, so the client still reads the 413.
    private var deferredClose: EventLoopPromise<Void>?

    init(
        gauge: ConnectionGauge, bodyTimeout: Duration, stallTimeout: Duration, stopSignal: StopSignal, streamingRoutes: RoutePatterns,
        logger: Logger
    ) {
        self.gauge = gauge
        self.streamingRoutes = streamingRoutes
        self.stopSignal = stopSignal
        self.bodyTimeout = TimeAmount(bodyTimeout)
        self.stallTimeout = TimeAmount(stallTimeout)
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        counted = true
        refused = !gauge.opened()
        HTTP10Close.install(in: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimers()
        uncount()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelTimers()
        uncount()
        context.fireChannelInactive()
    }

    private func cancelTimers() {
        // The connection is gone (the client reset it mid-drain): the close that waited is done.
        deferredClose?.succeed(())
        deferredClose = nil
        bodyDeadline?.cancel()
        bodyDeadline = nil
        stallDeadline?.cancel()
        stallDeadline = nil
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            stallDeadline?.cancel()
            stallDeadline = nil
        } else if stallDeadline == nil {
            let timeout = stallTimeout
            let logger = logger
            let channel = context.channel
            stallDeadline = context.eventLoop.scheduleTask(in: timeout) {
                logger.notice(
                    "closed a connection that took nothing written to it for \(timeout.nanoseconds / 1_000_000_000) s (--stall-timeout)")
                channel.close(promise: nil)
            }
        }
        context.fireChannelWritabilityChanged()
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
        case let .head(head):
            requestEnded = false
            answersPending += 1
            bodyStreams = head.method == .post && head.path.map { streamingRoutes.matches(String($0.prefix { $0 != "?" })) } ?? false
            scheduleBodyDeadline(context: context)
        case .end:
            requestEnded = true
            bodyDeadline?.cancel()
            bodyDeadline = nil
        case .body:
            if bodyStreams && !requestEnded { scheduleBodyDeadline(context: context) }
        }
        context.fireChannelRead(data)
    }

    /// Closes the connection `bodyTimeout` from now unless the body ends first (or, for a
    /// streamed body, its next part comes or an answer is written).
    private func scheduleBodyDeadline(context: ChannelHandlerContext) {
        bodyDeadline?.cancel()
        let timeout = bodyTimeout
        let logger = logger
        let channel = context.channel
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        let what = bodyStreams ? "whose streamed request body sent nothing for" : "whose request body did not arrive within"
        bodyDeadline = context.eventLoop.scheduleTask(in: timeout) {
            logger.notice("closed a connection \(what) \(timeout.nanoseconds / 1_000_000_000) s")
            handler.value.bodyTimedOut = true
            channel.close(promise: nil)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if answeredByGuard {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        switch unwrapOutboundIn(data) {
        case let .head(response):
            answersPending = max(0, answersPending - 1)
            answerInProgress = true
            // A streamed body refused (401, 415, a stop...) is read and dropped by the framework:
            // the whole of it is timed from its head again, as any other body.
            if response.status != .ok { bodyStreams = false }
        case .end:
            answerInProgress = false
            bodyStreams = false
        case .body:
            // A streamed body's client is waited for from the server's last answer too: an
            // append slow to commit is not the client's silence. Only the answer of the request
            // whose body it is counts (none is pending behind it), not an earlier pipelined one's.
            if bodyStreams && !requestEnded && answersPending == 0 { scheduleBodyDeadline(context: context) }
        }
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
            drainDeadline = .now() + Self.drainTime
            bodyDeadline?.cancel()
            bodyDeadline = context.eventLoop.scheduleTask(in: Self.drainTime) { channel.close(promise: nil) }
            context.read()
        default:
            context.write(data, promise: promise)
        }
    }

    private func drain(_ part: HTTPRequestPart, context: ChannelHandlerContext) {
        switch part {
        case let .body(buffer):
            let total = (drained ?? 0) + buffer.readableBytes
            drained = total
            if total > Self.drainLimit {
                endDrain(context: context)
            } else {
                // The route's side stopped asking for input: ask for it here, or the body stays
                // unread and the close (with data unread) resets the connection.
                context.read()
            }
        case .end, .head:
            endDrain(context: context)
        }
    }

    /// Closes the connection after a drain, with the close that waited for it.
    private func endDrain(context: ChannelHandlerContext) {
        drainDeadline = nil
        let promise = deferredClose
        deferredClose = nil
        context.close(promise: promise)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        // A stop cuts a connection by closing its input first (Hummingbird), then the rest.
        // Only between answers, and only when the socket takes it: never inside a streamed answer,
        // never a write that a stalled client would hold the close behind.
        if mode != .output, answersPending > 0, !answerInProgress, !answeredByGuard, context.channel.isActive, context.channel.isWritable {
            answersPending = 0
            // A stop says so; otherwise a connection closed with a body still coming timed out
            // (the body timeout, or the idle timeout between two parts of the body).
            let error =
                !stopSignal.isStopping && (bodyTimedOut || !requestEnded)
                ? ServerError(.requestTimeout, "The request's body did not arrive in time (--body-timeout, --idle-timeout); nothing was done.")
                : ServerError(
                    .unavailable,
                    "The server is stopping and did not answer this request; send it again once it is back (an append retried with the same event ids is answered as already recorded).")
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            writeClosingAnswer(error, context: context).whenComplete { _ in bound.value.close(mode: mode, promise: promise) }
            answeredByGuard = true
            return
        }
        if mode == .all, drained != nil, let drainDeadline, NIODeadline.now() < drainDeadline {
            if let promise {
                if let deferredClose { deferredClose.futureResult.cascade(to: promise) } else { deferredClose = promise }
            } else if deferredClose == nil {
                deferredClose = context.eventLoop.makePromise()
            }
            return
        }
        let waiting = deferredClose
        deferredClose = nil
        context.close(mode: mode, promise: promise ?? waiting)
        if let waiting, let promise { promise.futureResult.cascade(to: waiting) }
    }

    private func refuse(context: ChannelHandlerContext) {
        refused = true
        let channel = context.channel
        writeClosingAnswer(
            ServerError(.unavailable, "The server has as many connections open as it serves at once (--max-connections); try again shortly."),
            context: context
        ).whenComplete { _ in channel.close(promise: nil) }
    }

    /// Writes `error` as the whole answer (the JSON error, `Connection: close`, and `Retry-After`
    /// for 503) and flushes it; the caller closes after.
    private func writeClosingAnswer(_ error: ServerError, context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        var object = JSONObjectWriter()
        object.add("error", error.message)
        object.add("code", error.code.description)
        let body = ByteBuffer(string: object.finish() + "\n")
        var fields = HTTPFields()
        fields[.contentType] = "application/json; charset=utf-8"
        fields[.contentLength] = String(body.readableBytes)
        if error.code == .unavailable { fields[.retryAfter] = "1" }
        fields[.connection] = "close"
        context.write(wrapOutboundOut(.head(HTTPResponse(status: error.code.status, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        return context.writeAndFlush(wrapOutboundOut(.end(nil)))
    }
}
