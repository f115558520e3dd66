import GRPCCore
import NIOCore
import NIOHPACK
import NIOHTTP2

/// The bounds a connection keeps.
struct ConnectionSettings: Sendable {
    /// The largest request message taken; past it the call is answered RESOURCE_EXHAUSTED.
    var maxRequestBytes: Int
    /// The flow-control window given to the client, per stream and for the connection.
    var windowBytes: Int
    /// The bytes of requests not yet ended (whole messages and the storage of one not yet whole)
    /// one connection may hold at once; past it, the call whose bytes went over is answered
    /// RESOURCE_EXHAUSTED.
    var maxHeldBytes = 16 << 20
    /// The same bound, over every connection of the transport.
    var budget = InboundBudget(capacity: 256 << 20)
    /// A connection that sends nothing for this long is pinged.
    var keepaliveInterval: TimeAmount
}

/// Told by the transport to a connection: stop taking calls, finish those in flight, then close.
struct DrainConnection: Sendable {}

/// gRPC on one HTTP/2 connection, frame by frame: each stream's HEADERS start a call, its DATA
/// are deframed into request messages, and the call's response parts go out as HEADERS, DATA
/// and trailers. One handler per connection, behind NIOHTTP2Handler; no channel, pipeline or
/// task bridge per stream, which is where grpc-swift-nio-transport spent most of a small
/// call's time (BENCHMARKS.md, S15).
///
/// Flow control: a stream's window is given back as its bytes are deframed (a request is
/// bounded by the message limit, refused as soon as its length is past it), the connection's as
/// NIOHTTP2Handler counts it down; responses are written as the
/// client's windows allow, and a call that writes faster than its client reads waits
/// (``RPCOutbound``).
final class GRPCConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    typealias Stream = RPCStream<RPCAsyncSequence<RPCRequestPart<[UInt8]>, any Error>, RPCWriter<RPCResponsePart<[UInt8]>>.Closable>

    /// What the transport needs to start a call's handler.
    struct CallStart: Sendable {
        let stream: Stream
        let descriptor: MethodDescriptor
        let remotePeer: String
        let localPeer: String
        /// Hands the connection the call's cancellation handle, which the call's task makes
        /// (grpc-swift's handlers also find it as a task-local there).
        let register: @Sendable (ServerContext.RPCCancellationHandle) -> Void
    }

    /// One call's state on the event loop.
    private final class Call {
        let inbound = RPCInbound()
        let outbound: RPCOutbound
        let cancellation = CancellationBox()
        /// Bytes of a message not yet whole, in storage of the call's own.
        var partial: ByteBuffer?
        /// Bytes of whole request messages handed to the handler before the request ended.
        var messageBytes = 0
        /// Of the request's bytes, those counted against the connection's and the transport's bounds.
        var held = 0
        /// Stream bytes read and not yet given back to the client's window.
        var uncredited = 0
        /// The client sent END_STREAM: it sends nothing more.
        var clientClosed = false
        /// The request's parts are finished (cleanly or not).
        var requestEnded = false
        var headersSent = false
        var responseEnded = false

        init(outbound: RPCOutbound) {
            self.outbound = outbound
        }
    }

    private let settings: ConnectionSettings
    /// Starts a call's handler (in a task of its own).
    private let start: @Sendable (CallStart) -> Void
    /// Whether NIOHTTP2Handler met a connection error (it sent a GOAWAY with an error code).
    private let errors: ConnectionErrorWatch
    private var calls: [HTTP2StreamID: Call] = [:]
    /// Bytes of unfinished messages of all this connection's calls.
    private var heldBytes = 0
    private var context: ChannelHandlerContext?
    private var readSinceTick = false
    private var keepalive: RepeatedTask?
    private var draining = false
    private var lastStreamID = HTTP2StreamID.rootStream
    private var peers = (remote: "unknown", local: "unknown")

    init(settings: ConnectionSettings, errors: ConnectionErrorWatch, start: @escaping @Sendable (CallStart) -> Void) {
        self.settings = settings
        self.errors = errors
        self.start = start
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func channelActive(context: ChannelHandlerContext) {
        peers = (Self.describe(context.channel.remoteAddress), Self.describe(context.channel.localAddress))
        // The connection's window starts at HTTP/2's 65,535 bytes whatever the settings say:
        // widen it to the streams' window at once.
        let widen = settings.windowBytes - 65_535
        if widen > 0 {
            context.write(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: widen))), promise: nil)
            context.flush()
        }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        keepalive = context.eventLoop.scheduleRepeatedTask(initialDelay: settings.keepaliveInterval, delay: settings.keepaliveInterval) { _ in
            bound.value.tick()
        }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        keepalive?.cancel()
        keepalive = nil
        let open = calls
        calls = [:]
        for call in open.values {
            release(call)
            abandon(call)
        }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        readSinceTick = true
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers): receive(headers, on: frame.streamID, context: context)
        case .data(let data): receive(data, on: frame.streamID, context: context)
        default: break  // pings, settings, windows and resets: NIOHTTP2Handler acts on them; a reset ends its stream with StreamClosedEvent
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let closed = event as? StreamClosedEvent {
            streamClosed(closed.streamID, context: context)
        } else if let window = event as? NIOHTTP2WindowUpdatedEvent, window.streamID == .rootStream, let inbound = window.inboundWindowSize {
            // The connection's window is given back whatever became of the bytes: those of a
            // stream already reset are counted here too, though they never reach this handler.
            if inbound <= settings.windowBytes / 2 {
                context.write(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: settings.windowBytes - inbound))), promise: nil)
            }
        } else if event is DrainConnection {
            drain(context: context)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A stream's protocol error has reset that stream (NIOHTTP2Handler did, and its close
        // ends the call); the connection goes on. A connection error (NIOHTTP2Handler sent a
        // GOAWAY with an error code), or an error from below HTTP/2 (TLS, the socket), ends it.
        if error is any NIOHTTP2Error && !errors.failed { return }
        context.close(promise: nil)
    }

    // MARK: Requests

    private func receive(_ headers: HTTP2Frame.FramePayload.Headers, on id: HTTP2StreamID, context: ChannelHandlerContext) {
        if let call = calls[id] {
            // Trailers from the client: only their end of stream means anything.
            if headers.endStream {
                call.clientClosed = true
                endRequest(call, on: id, context: context)
            }
            return
        }
        guard !draining || id <= lastStreamID else {
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.refusedStream))), promise: nil)
            return
        }
        lastStreamID = max(lastStreamID, id)
        switch GRPCHeaders.request(headers.headers) {
        case .refused(let answer):
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: answer, endStream: true)))), promise: nil)
            if !headers.endStream {
                context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.noError))), promise: nil)
            }
        case .call(let descriptor, let metadata):
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            let call = Call(outbound: RPCOutbound(eventLoop: context.eventLoop) { bound.value.send(on: id) })
            calls[id] = call
            call.inbound.yield(.metadata(metadata))
            if headers.endStream {
                call.clientClosed = true
                endRequest(call, on: id, context: context)
            }
            let stream = Stream(
                descriptor: descriptor, inbound: RPCAsyncSequence(wrapping: call.inbound), outbound: RPCWriter.Closable(wrapping: call.outbound))
            let cancellation = call.cancellation
            start(CallStart(stream: stream, descriptor: descriptor, remotePeer: peers.remote, localPeer: peers.local) { cancellation.set($0) })
        }
    }

    private func receive(_ data: HTTP2Frame.FramePayload.Data, on id: HTTP2StreamID, context: ChannelHandlerContext) {
        guard case .byteBuffer(var bytes) = data.data else { return }
        let length = bytes.readableBytes + (data.paddingBytes.map { $0 + 1 } ?? 0)
        guard let call = calls[id], !call.responseEnded, !call.requestEnded else { return }
        if data.endStream { call.clientClosed = true }
        if var partial = call.partial {
            // Taken out first, so that it is the storage's only holder and grows in place.
            call.partial = nil
            partial.writeBuffer(&bytes)
            call.partial = partial
        } else {
            call.partial = bytes
        }
        deframe(call, on: id, context: context)
        guard !call.responseEnded else { return }
        if let refusal = hold(call) {
            refuse(call, on: id, refusal, context: context)
            return
        }
        if data.endStream {
            endRequest(call, on: id, context: context)
        } else {
            call.uncredited += length
            if call.uncredited >= settings.windowBytes / 2 {
                context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .windowUpdate(windowSizeIncrement: call.uncredited))), promise: nil)
                call.uncredited = 0
            }
        }
    }

    /// Hands every whole message of the call's bytes to its handler; refuses a compressed one,
    /// or one over the limit as soon as its length is read.
    private func deframe(_ call: Call, on id: HTTP2StreamID, context: ChannelHandlerContext) {
        guard var buffer = call.partial else { return }
        call.partial = nil
        while buffer.readableBytes >= 5,
            let flag = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self),
            let length = buffer.getInteger(at: buffer.readerIndex + 1, as: UInt32.self)
        {
            guard flag == 0 else {
                refuse(call, on: id, Status(code: .internalError, message: "A message is flagged compressed, but the call named no encoding."), context: context)
                return
            }
            guard length <= settings.maxRequestBytes else {
                refuse(call, on: id, Status(code: .resourceExhausted, message: "The request message of \(length) bytes is over the limit of \(settings.maxRequestBytes) bytes."), context: context)
                return
            }
            guard buffer.readableBytes >= 5 + Int(length) else { break }
            buffer.moveReaderIndex(forwardBy: 5)
            guard let message = buffer.readBytes(length: Int(length)) else { break }
            call.messageBytes += message.count
            call.inbound.yield(.message(message))
        }
        guard buffer.readableBytes > 0 else { return }
        if buffer.readerIndex > 0 || buffer.capacity > 2 * buffer.readableBytes + 4096 {
            // What is left of a message goes to storage of its own: not a slice that keeps the
            // connection's read buffer alive, nor one whose consumed part is never given back.
            var own = context.channel.allocator.buffer(capacity: buffer.readableBytes)
            own.writeBuffer(&buffer)
            buffer = own
        }
        call.partial = buffer
    }

    /// Counts the call's request against the bounds until the request ends: its whole messages
    /// (which wait for the end before the handler takes them: every method here takes one) and
    /// the storage of the one not yet whole. The status that refuses it when they are past one.
    private func hold(_ call: Call) -> Status? {
        let now = call.requestEnded ? 0 : call.messageBytes + (call.partial?.capacity ?? 0)
        let delta = now - call.held
        guard delta != 0 else { return nil }
        call.held = now
        heldBytes += delta
        let withinBudget = settings.budget.add(delta)
        guard delta > 0 else { return nil }
        if heldBytes > settings.maxHeldBytes {
            return Status(
                code: .resourceExhausted,
                message: "This connection holds \(heldBytes) bytes of unfinished requests, over its limit of \(settings.maxHeldBytes); send fewer large requests at once.")
        }
        if !withinBudget {
            return Status(code: .resourceExhausted, message: "The server holds too many bytes of unfinished requests; try again later.")
        }
        return nil
    }

    /// Gives back what the call's request held.
    private func release(_ call: Call) {
        call.partial = nil
        call.messageBytes = 0
        guard call.held != 0 else { return }
        heldBytes -= call.held
        _ = settings.budget.add(-call.held)
        call.held = 0
    }

    private func endRequest(_ call: Call, on id: HTTP2StreamID, context: ChannelHandlerContext) {
        guard !call.requestEnded else { return }
        call.requestEnded = true
        if let partial = call.partial, partial.readableBytes > 0 {
            refuse(call, on: id, Status(code: .internalError, message: "The request ended inside a message (\(partial.readableBytes) bytes of it)."), context: context)
        } else {
            release(call)
            call.inbound.finish()
        }
    }

    /// Answers a call the transport cannot go on with: its handler is cancelled, and the client
    /// gets `status` (and a reset, when it is still sending).
    private func refuse(_ call: Call, on id: HTTP2StreamID, _ status: Status, context: ChannelHandlerContext) {
        release(call)
        call.requestEnded = true
        call.inbound.finish(throwing: RPCError(code: RPCError.Code(status.code) ?? .internalError, message: status.message))
        call.cancellation.cancel()
        call.outbound.close()
        let headers = call.headersSent ? GRPCHeaders.trailers(status, [:]) : GRPCHeaders.trailersOnly(status)
        end(call, on: id, with: headers, context: context)
    }

    /// Writes a response's last HEADERS. A client still sending is then told to stop (RST_STREAM
    /// NO_ERROR, as gRPC's specification allows), once those headers are out: a reset sent
    /// before would drop them while they wait for the client's window.
    private func end(_ call: Call, on id: HTTP2StreamID, with headers: HPACKHeaders, context: ChannelHandlerContext) {
        call.responseEnded = true
        let frame = wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers, endStream: true))))
        guard !call.clientClosed else {
            context.write(frame, promise: nil)
            return
        }
        let written = context.eventLoop.makePromise(of: Void.self)
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        written.futureResult.whenSuccess {
            guard let context = bound.value.context else { return }
            context.writeAndFlush(bound.value.wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.noError))), promise: nil)
        }
        context.write(frame, promise: written)
    }

    // MARK: Responses

    /// Writes what the call's handler has written since the last time, and flushes it.
    private func send(on id: HTTP2StreamID) {
        guard let context, let call = calls[id] else { return }
        for part in call.outbound.take() {
            guard !call.responseEnded else { break }
            switch part {
            case .metadata(let metadata):
                write(headers: GRPCHeaders.responseHeaders(metadata), endStream: false, on: id, context: context)
                call.headersSent = true
            case .message(let message):
                if !call.headersSent {
                    write(headers: GRPCHeaders.responseHeaders([:]), endStream: false, on: id, context: context)
                    call.headersSent = true
                }
                var buffer = context.channel.allocator.buffer(capacity: message.count + 5)
                buffer.writeInteger(UInt8(0))
                buffer.writeInteger(UInt32(truncatingIfNeeded: message.count))
                buffer.writeBytes(message)
                let promise = context.eventLoop.makePromise(of: Void.self)
                let outbound = call.outbound
                let size = message.count + 5
                promise.futureResult.whenComplete { _ in outbound.sent(size) }
                context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(buffer))))), promise: promise)
            case .status(let status, let metadata):
                if !call.requestEnded {
                    // Answered before the request ended: the rest of it is not wanted.
                    call.requestEnded = true
                    release(call)
                    call.inbound.finish()
                }
                end(call, on: id, with: call.headersSent ? GRPCHeaders.trailers(status, metadata) : GRPCHeaders.trailersOnly(status, metadata), context: context)
            }
        }
        context.flush()
    }

    private func write(headers: HPACKHeaders, endStream: Bool, on id: HTTP2StreamID, context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers, endStream: endStream)))), promise: nil)
    }

    // MARK: Ends

    private func streamClosed(_ id: HTTP2StreamID, context: ChannelHandlerContext) {
        guard let call = calls.removeValue(forKey: id) else { return }
        release(call)
        if call.responseEnded {
            call.outbound.close()
            call.inbound.finish()
        } else {
            abandon(call)
        }
        if draining && calls.isEmpty { close(context: context) }
    }

    /// The client reset the stream or went away before the call ended: its handler is cancelled.
    private func abandon(_ call: Call) {
        call.responseEnded = true
        call.outbound.close()
        call.inbound.finish(throwing: RPCError(code: .cancelled, message: "The client reset the stream or closed the connection."))
        call.cancellation.cancel()
    }

    /// Graceful shutdown: no new call (GOAWAY), the calls in flight finish, then the connection
    /// closes. The calls are told the server is stopping (their cancellation), as grpc-swift's
    /// transport told them: a subscription ends at once, a unary call or a read answers as usual.
    private func drain(context: ChannelHandlerContext) {
        guard !draining else { return }
        draining = true
        for call in calls.values where !call.responseEnded { call.cancellation.cancel() }
        if calls.isEmpty {
            close(context: context)
        } else {
            context.writeAndFlush(wrapOutboundOut(goAway), promise: nil)
        }
    }

    private var goAway: HTTP2Frame {
        HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: lastStreamID, errorCode: .noError, opaqueData: nil))
    }

    /// Closes once everything written before has reached the socket: the last answers are not
    /// dropped with the connection.
    private func close(context: ChannelHandlerContext) {
        let written = context.eventLoop.makePromise(of: Void.self)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        written.futureResult.whenComplete { _ in bound.value.close(promise: nil) }
        context.writeAndFlush(wrapOutboundOut(goAway), promise: written)
    }

    /// Pings a connection that sent nothing since the last tick: its answer keeps it open
    /// (ConnectionGuard closes one silent for long), and a vanished peer is found.
    private func tick() {
        guard let context else { return }
        defer { readSinceTick = false }
        guard !readSinceTick else { return }
        context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .ping(HTTP2PingData(withInteger: 0x4553_5354), ack: false))), promise: nil)
    }

    private static func describe(_ address: SocketAddress?) -> String {
        guard let address, let ip = address.ipAddress, let port = address.port else { return "unknown" }
        switch address.protocol {
        case .inet6: return "ipv6:[\(ip)]:\(port)"
        default: return "ipv4:\(ip):\(port)"
        }
    }
}

/// Sees the frames NIOHTTP2Handler writes, to tell its connection errors (it sends a GOAWAY with
/// an error code, then reports the error) from a stream's (it resets the stream, then reports
/// the error the same way). Touched only on the connection's event loop.
final class ConnectionErrorWatch: NIOHTTP2FrameDelegate {
    private(set) var failed = false

    func wroteFrame(_ frame: HTTP2Frame) {
        if case .goAway(_, let code, _) = frame.payload, code != .noError { failed = true }
    }
}
