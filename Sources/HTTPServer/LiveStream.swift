import EventStore
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// How a live stream writes what its subscription hands out: each part's text, or nil to write
/// nothing for it.
struct LiveStreamFormat: Sendable {
    /// An event's text; nil passes over it (it does not count toward a limit either).
    var event: @Sendable (RecordedEvent) -> String?
    /// The text of the first catch-up (later ones are not written).
    var caughtUp: @Sendable (_ through: UInt64) -> String? = { _ in nil }
    /// The heartbeat, written when a whole heartbeat interval passed without an event; nil: none.
    var heartbeat: String? = nil
    /// The last words when the subscription fails (the store closed); the status is already sent.
    var failure: @Sendable (any Error) -> String? = { _ in nil }
}

/// One live stream: a subscription written to a response body as the socket drains.
///
/// Memory is bounded for a slow client: the subscription is pulled by a task that hands each
/// message over in a ``Parcel`` and waits until the writer has written it and come back (a
/// ``Handoff``); the writer empties the parcel as it writes, and comes back only once the
/// socket takes more (an empty write waits for the channel to be writable). So a stalled
/// client holds its subscription's page (``StoreConfiguration/subscriptionPageBytes``) and the
/// text of one event in the connection's buffer, never more, until ``ServerOptions/stallTimeout``
/// cuts it.
///
/// It ends, and its handler with it: after `limit` events (the response ends properly); when
/// the client closes its side, even while idle (Hummingbird's inbound-close cancellation); on
/// a graceful stop of the server (the response ends properly); when the store closes. The
/// connection closes after it (Hummingbird's inbound-close watch consumes the request side), so
/// its routes answer with `Connection: close` and a client does not try to reuse it.
struct LiveStream: Sendable {
    private enum Item: Sendable {
        case message(Parcel<SubscriptionMessage>)
        case ended((any Error)?)
        case tick
    }

    let subscription: ProgressSubscription
    let format: LiveStreamFormat
    /// Written first (an app route's prelude: what the client must read before the events).
    var prelude: String = ""
    var limit: Int?

    /// The response body: streams until one of the ends above, counted in `server`'s
    /// ``Server/openStreams`` while it runs, holding `slot` (its place under the cap on live
    /// streams) until it ends.
    func body(for request: Request, on server: Server, holding slot: ClientCap.Slot) -> ResponseBody {
        let heartbeat = format.heartbeat == nil ? nil : server.options.heartbeat
        let clock = server.clock
        let streams = server.openStreams
        let logger = server.logger
        return ResponseBody { writer in
            streams.opened()
            defer {
                streams.closed()
                slot.release()
            }
            let handoff = Handoff<Item>()
            do {
                try await request.body.consumeWithCancellationOnInboundClose { _ in
                    try await withGracefulShutdownHandler {
                        try await pump(into: &writer, handoff: handoff, heartbeat: heartbeat, clock: clock)
                    } onGracefulShutdown: {
                        handoff.finish()
                    }
                }
                try await writer.finish(nil)
            } catch {
                // The client left (or the connection is being cut): nothing more can be written.
                logger.debug("a live stream ended early", metadata: ["reason": "\(error)"])
            }
        }
    }

    private func pump(
        into writer: inout any ResponseBodyWriter, handoff: Handoff<Item>, heartbeat: Duration?, clock: any Clock<Duration>
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            defer {
                handoff.finish()
                group.cancelAll()
            }
            let subscription = self.subscription
            group.addTask {
                do {
                    var messages = subscription.makeAsyncIterator()
                    // No local keeps the message: once the writer has emptied the parcel, the
                    // event's bytes are freed while the socket drains.
                    while let parcel = Parcel(try await messages.next()) {
                        guard await handoff.send(.message(parcel)) else { return }
                    }
                    _ = await handoff.send(.ended(nil))
                } catch {
                    _ = await handoff.send(.ended(error))
                }
            }
            if let heartbeat {
                group.addTask {
                    while true {
                        do {
                            try await clock.sleep(for: heartbeat)
                        } catch {
                            return
                        }
                        guard await handoff.send(.tick) else { return }
                    }
                }
            }
            if !prelude.isEmpty { try await writer.write(ByteBuffer(string: prelude)) }
            var delivered = 0
            var eventSinceTick = false
            var caughtUpWritten = false
            // Set after an event is written: the next is asked for only once the socket takes more.
            var mustDrain = false
            loop: while true {
                if mustDrain {
                    // An empty write waits until the channel is writable again; nothing of the
                    // last event is held meanwhile (it went out of scope with its iteration).
                    try await writer.write(ByteBuffer())
                    mustDrain = false
                }
                guard let item = await handoff.receive() else { break }
                switch item {
                case let .message(parcel):
                    switch parcel.take() {
                    case let .event(event)?:
                        guard let text = format.event(event) else { continue }
                        try await writer.write(ByteBuffer(string: text))
                        eventSinceTick = true
                        delivered += 1
                        if let limit, delivered >= limit { break loop }
                        mustDrain = true
                    case let .caughtUp(through)?:
                        guard !caughtUpWritten else { continue }
                        caughtUpWritten = true
                        if let text = format.caughtUp(through) { try await writer.write(ByteBuffer(string: text)) }
                    case nil:
                        continue
                    }
                case .tick:
                    if !eventSinceTick, let text = format.heartbeat { try await writer.write(ByteBuffer(string: text)) }
                    eventSinceTick = false
                case let .ended(error):
                    if let error, let text = format.failure(error) { try await writer.write(ByteBuffer(string: text)) }
                    break loop
                }
            }
        }
    }
}

/// One value handed from a task to another, taken out by the receiver: whoever still holds the
/// parcel after that holds nothing (a live stream's event is freed once written).
final class Parcel<Value: Sendable>: Sendable {
    private let content: Mutex<Value?>

    /// A parcel of `value`; nil when there is no value (the end of a sequence).
    init?(_ value: Value?) {
        guard let value else { return nil }
        content = Mutex(value)
    }

    /// The value, the first time; nil after.
    func take() -> Value? {
        content.withLock { content in
            defer { content = nil }
            return content
        }
    }
}

/// What an app's live route writes: the text first, the subscription to follow after it, and
/// each event's text (nil passes over an event).
public struct LiveStreamStart: Sendable {
    public let prelude: String
    public let subscription: Subscription
    public let line: @Sendable (RecordedEvent) -> String?

    public init(prelude: String, subscription: Subscription, line: @escaping @Sendable (RecordedEvent) -> String?) {
        self.prelude = prelude
        self.subscription = subscription
        self.line = line
    }
}

extension Server {
    /// A live stream as an app route's answer (see ``AppServerParts``): takes a place under the
    /// cap on live streams first (``ServerError/Code/unavailable``, 503, when it is full:
    /// `start` does not run, so a full server records nothing), then runs `start` (which may
    /// record something, and throws what the route answers), then answers 200 with
    /// `contentType` and a body that writes the prelude and then each event's line as it is
    /// committed. The stream is bounded as `/subscribe`'s is: a client that stops reading is
    /// cut after ``ServerOptions/stallTimeout``, a graceful stop ends it, and the connection
    /// closes after it.
    public func liveResponse(
        to request: Request, contentType: String, start: () async throws -> LiveStreamStart
    ) async throws -> Response {
        let slot = try streamCap.reserve()
        let begun = try await start()
        let stream = LiveStream(
            subscription: begun.subscription.withProgress, format: LiveStreamFormat(event: begun.line), prelude: begun.prelude)
        return Response(
            status: .ok, headers: [.contentType: contentType, .cacheControl: "no-cache", .connection: "close"],
            body: stream.body(for: request, on: self, holding: slot))
    }
}
