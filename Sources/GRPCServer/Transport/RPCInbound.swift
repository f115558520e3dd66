import GRPCCore
import Synchronization

/// The request parts of one call, from the connection's event loop to the call's task: the
/// metadata, then each message as it is deframed, then the end (or the error that cut it).
///
/// Bounded by the connection: what its calls' requests hold until they end is counted against
/// the connection's and the transport's bounds (``ConnectionSettings/maxHeldBytes``).
final class RPCInbound: AsyncSequence, Sendable {
    typealias Element = RPCRequestPart<[UInt8]>

    private struct State {
        var parts: [Element] = []  // a call's few parts: the metadata and a message or two
        /// nil while open; the end (nil error: a clean end) once finished.
        var end: Result<Void, any Error>?
        var waiter: CheckedContinuation<Element?, any Error>?
    }

    private let state = Mutex(State())

    /// Hands `part` to the reader (nothing once finished).
    func yield(_ part: Element) {
        let waiter: CheckedContinuation<Element?, any Error>? = state.withLock { state in
            guard state.end == nil else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.parts.append(part)
            return nil
        }
        waiter?.resume(returning: part)
    }

    /// Ends the parts: cleanly (nil), or with `error` once the parts before it are read.
    func finish(throwing error: (any Error)? = nil) {
        let waiter: CheckedContinuation<Element?, any Error>? = state.withLock { state in
            guard state.end == nil else { return nil }
            state.end = error.map { .failure($0) } ?? .success(())
            guard state.parts.isEmpty, let waiter = state.waiter else { return nil }
            state.waiter = nil
            return waiter
        }
        guard let waiter else { return }
        if let error { waiter.resume(throwing: error) } else { waiter.resume(returning: nil) }
    }

    private enum Next {
        case part(Element)
        case end(Result<Void, any Error>)
        case wait
    }

    fileprivate func next() async throws -> Element? {
        let now: Next = state.withLock { state in
            if let part = (state.parts.isEmpty ? nil : state.parts.removeFirst()) { return .part(part) }
            if let end = state.end { return .end(end) }
            return .wait
        }
        switch now {
        case .part(let part): return part
        case .end(let end):
            try end.get()
            return nil
        case .wait:
            return try await withCheckedThrowingContinuation { continuation in
                let ready: Next? = state.withLock { state in
                    if let part = (state.parts.isEmpty ? nil : state.parts.removeFirst()) { return .part(part) }
                    if let end = state.end { return .end(end) }
                    state.waiter = continuation
                    return nil
                }
                switch ready {
                case .part(let part): continuation.resume(returning: part)
                case .end(.success): continuation.resume(returning: nil)
                case .end(.failure(let error)): continuation.resume(throwing: error)
                case .wait, nil: break
                }
            }
        }
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let inbound: RPCInbound
        mutating func next() async throws -> Element? { try await inbound.next() }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(inbound: self) }
}
