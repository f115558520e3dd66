import GRPCCore
import NIOCore
import Synchronization

/// The response parts of one call, from the call's task to the connection's event loop.
///
/// A write hands its part over and returns; the parts written before the event loop gets to
/// them go out together, in one flush. A call that writes faster than its client reads waits
/// once the bytes handed over and not yet written to the socket pass ``highWater`` (about one
/// response message of the face's budget): a client that stops reading holds that much, not
/// the whole subscription.
final class RPCOutbound: ClosableRPCWriterProtocol, Sendable {
    typealias Element = RPCResponsePart<[UInt8]>

    /// The unsent bytes past which a write waits for its client.
    static let highWater = 4 << 20

    private struct State {
        var pending: [Element] = []
        /// Whether the event loop has been asked to take the pending parts.
        var scheduled = false
        /// Message bytes handed over and not yet written to the socket.
        var unsent = 0
        var waiter: CheckedContinuation<Void, any Error>?
        /// Set when the stream is gone: every write fails with it.
        var closed: (any Error)?
        var statusWritten = false
    }

    private let state = Mutex(State())
    private let eventLoop: any EventLoop
    /// Asks the connection to take this call's pending parts (run on the event loop).
    private let drain: @Sendable () -> Void

    init(eventLoop: any EventLoop, drain: @escaping @Sendable () -> Void) {
        self.eventLoop = eventLoop
        self.drain = drain
    }

    func write(_ part: Element) async throws {
        let (schedule, full) = try state.withLock { state throws(RPCError) in
            if state.closed != nil { throw Self.gone }
            guard !state.statusWritten else {
                throw RPCError(code: .internalError, message: "A part was written after the call's status.")
            }
            switch part {
            case .status: state.statusWritten = true
            case .message(let bytes): state.unsent += bytes.count + 5
            case .metadata: break
            }
            state.pending.append(part)
            let schedule = !state.scheduled
            state.scheduled = true
            return (schedule, state.unsent > Self.highWater)
        }
        if schedule { eventLoop.execute(drain) }
        if full { try await waitForRoom() }
    }

    func write(contentsOf parts: some Sequence<Element>) async throws {
        for part in parts { try await write(part) }
    }

    /// A call that ends without a status (a transport's handler always writes one) is answered
    /// with INTERNAL, so its client is not left waiting.
    func finish() async {
        try? await write(.status(Status(code: .internalError, message: "The call ended without a status."), [:]))
    }

    func finish(throwing error: any Error) async {
        try? await write(.status(Status(code: .internalError, message: "The call failed: \(error)"), [:]))
    }

    private func waitForRoom() async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resume: Result<Void, any Error>? = state.withLock { state in
                    if let error = state.closed { return .failure(error) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    guard state.unsent > Self.highWater else { return .success(()) }
                    state.waiter = continuation
                    return nil
                }
                if let resume { continuation.resume(with: resume) }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Whether a write waits for room (for tests).
    var waiting: Bool { state.withLock { $0.waiter != nil } }

    // MARK: The event loop's side

    /// The parts written since the last take, in order.
    func take() -> [Element] {
        state.withLock { state in
            state.scheduled = false
            defer { state.pending = [] }
            return state.pending
        }
    }

    /// `bytes` of messages reached the socket: a writer waiting for room may go on.
    func sent(_ bytes: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            state.unsent -= bytes
            guard state.unsent <= Self.highWater, let waiter = state.waiter else { return nil }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// The stream is gone (reset, or its connection closed): every write from now on fails.
    func close() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            if state.closed == nil { state.closed = Self.gone }
            state.pending = []
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(throwing: Self.gone)
    }

    private static let gone = RPCError(code: .cancelled, message: "The stream is closed: the client went away or reset it.")
}
