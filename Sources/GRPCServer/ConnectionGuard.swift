import NIOCore
import Synchronization

/// What the transport leaves open, for the gRPC face: a cap on the connections held at once
/// (past it, a new connection is closed at once), and a bound on a connection that sends
/// nothing at all (no request, no answer to the server's keepalive pings, which go out every
/// 5 s) for ``silenceLimit``: it is closed. A peer that vanished, or one that holds connections
/// open on purpose, would otherwise keep them forever.
final class ConnectionGuard: Sendable {
    let capacity: Int
    let silenceLimit: TimeAmount
    private let open = Mutex(0)

    init(capacity: Int, silenceLimit: TimeAmount = .seconds(30)) {
        self.capacity = max(1, capacity)
        self.silenceLimit = silenceLimit
    }

    /// The connections open now.
    var count: Int { open.withLock { $0 } }

    /// Counts an accepted connection (uncounting it when it closes) and bounds its silence;
    /// past the cap, closes it and answers false. Runs on the channel's event loop.
    func admit(_ channel: any Channel) throws -> Bool {
        let admitted = open.withLock { count in
            guard count < capacity else { return false }
            count += 1
            return true
        }
        guard admitted else {
            channel.close(promise: nil)
            return false
        }
        channel.closeFuture.whenComplete { [self] _ in open.withLock { $0 -= 1 } }
        try channel.pipeline.syncOperations.addHandlers([IdleStateHandler(readTimeout: silenceLimit), SilenceCloser()], position: .first)
        return true
    }
}

/// Closes a connection when the idle handler before it says nothing was read for too long.
private final class SilenceCloser: ChannelInboundHandler, Sendable {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}
