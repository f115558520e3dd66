import GRPCCore
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// The gRPC face's server transport: HTTP/2 on SwiftNIO (cleartext, or TLS offering ALPN `h2`),
/// each connection served frame by frame by one ``GRPCConnectionHandler``, each call's handler
/// run by grpc-swift's server in a task of its own.
///
/// It replaces grpc-swift-nio-transport's server, which set up a channel, a pipeline and two
/// async bridges per call: more than 85 % of the face's time in small appends (BENCHMARKS.md,
/// S15). The calls' semantics (routing, deadlines, serialization, interceptors) are still
/// grpc-swift's own.
final class FrameTransport: ServerTransport, Sendable {
    typealias Bytes = [UInt8]

    /// Where and how to serve.
    struct Config: Sendable {
        var host: String
        var port: Int
        var tls: NIOSSLContext?
        var connection: ConnectionSettings
        /// The calls one connection may have open at once (HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS).
        var maxConcurrentStreams = 1024
    }

    private struct State {
        var server: (any Channel)?
        var connections: [ObjectIdentifier: any Channel] = [:]
        var stopping = false
        /// Calls whose handlers run.
        var running = 0
        /// Waiting for no connection and no call.
        var idleWaiters: [CheckedContinuation<Void, Never>] = []

        mutating func takeWaitersIfIdle() -> [CheckedContinuation<Void, Never>] {
            guard connections.isEmpty, running == 0 else { return [] }
            defer { idleWaiters = [] }
            return idleWaiters
        }
    }

    private let config: Config
    private let guardian: ConnectionGuard
    private let group: MultiThreadedEventLoopGroup
    private let state = Mutex(State())
    private let bound: EventLoopPromise<Int>

    init(config: Config, connections: ConnectionGuard, group: MultiThreadedEventLoopGroup = .singleton) {
        self.config = config
        self.guardian = connections
        self.group = group
        self.bound = group.any().makePromise(of: Int.self)
    }

    /// The port bound, once listening; throws the bind's error.
    var listeningPort: Int {
        get async throws { try await bound.futureResult.get() }
    }

    func listen(
        streamHandler: @escaping @Sendable (RPCStream<Inbound, Outbound>, ServerContext) async -> Void
    ) async throws {
        let start: @Sendable (GRPCConnectionHandler.CallStart) -> Void = { [self] call in
            state.withLock { $0.running += 1 }
            Task {
                await withServerContextRPCCancellationHandle { handle in
                    call.register(handle)
                    let context = ServerContext(descriptor: call.descriptor, remotePeer: call.remotePeer, localPeer: call.localPeer, cancellation: handle)
                    await streamHandler(call.stream, context)
                }
                self.callEnded()
            }
        }
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture { try self.configure(channel, start: start) }
            }
        let server: any Channel
        do {
            server = try await bootstrap.bind(host: config.host, port: config.port).get()
        } catch {
            bound.fail(error)
            throw error
        }
        let stopped = state.withLock { state in
            state.server = server
            return state.stopping
        }
        if stopped { server.close(promise: nil) }
        bound.succeed(server.localAddress?.port ?? config.port)
        await withTaskCancellationHandler {
            try? await server.closeFuture.get()
            await untilIdle()
        } onCancel: {
            closeAll()
        }
    }

    /// Stops taking connections, and tells each connection to take no new call and close once
    /// its calls have ended.
    func beginGracefulShutdown() {
        let (server, connections) = state.withLock { state in
            state.stopping = true
            return (state.server, Array(state.connections.values))
        }
        server?.close(promise: nil)
        for connection in connections { connection.pipeline.fireUserInboundEventTriggered(DrainConnection()) }
    }

    // MARK: Connections

    private func configure(_ channel: any Channel, start: @escaping @Sendable (GRPCConnectionHandler.CallStart) -> Void) throws {
        let key = ObjectIdentifier(channel)
        let admitted = state.withLock { state in
            guard !state.stopping else { return false }
            state.connections[key] = channel
            return true
        }
        guard admitted else {
            channel.close(promise: nil)
            return
        }
        channel.closeFuture.whenComplete { [self] _ in
            let waiters = state.withLock { state in
                state.connections[key] = nil
                return state.takeWaitersIfIdle()
            }
            for waiter in waiters { waiter.resume() }
        }
        guard try guardian.admit(channel) else { return }
        let pipeline = channel.pipeline.syncOperations
        if let tls = config.tls { try pipeline.addHandler(NIOSSLServerHandler(context: tls)) }
        var connection = NIOHTTP2Handler.ConnectionConfiguration()
        connection.initialSettings = [
            HTTP2Setting(parameter: .initialWindowSize, value: config.connection.windowBytes),
            HTTP2Setting(parameter: .maxFrameSize, value: 1 << 14),
            HTTP2Setting(parameter: .maxConcurrentStreams, value: config.maxConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: HPACKDecoder.defaultMaxHeaderListSize),
        ]
        let errors = ConnectionErrorWatch()
        try pipeline.addHandler(NIOHTTP2Handler(mode: .server, frameDelegate: errors, connectionConfiguration: connection))
        try pipeline.addHandler(GRPCConnectionHandler(settings: config.connection, errors: errors, start: start))
    }

    private func callEnded() {
        let waiters = state.withLock { state in
            state.running -= 1
            return state.takeWaitersIfIdle()
        }
        for waiter in waiters { waiter.resume() }
    }

    private func untilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state in
                guard state.connections.isEmpty, state.running == 0 else {
                    state.idleWaiters.append(continuation)
                    return false
                }
                return true
            }
            if idle { continuation.resume() }
        }
    }

    /// Closes the listener and every connection at once (the serving task was cancelled):
    /// each call still open is cancelled.
    private func closeAll() {
        let (server, connections) = state.withLock { state in
            state.stopping = true
            return (state.server, Array(state.connections.values))
        }
        server?.close(promise: nil)
        for connection in connections { connection.close(promise: nil) }
    }
}
