import GRPCCore
import Synchronization

/// A call's cancellation, between its connection (which learns that the client went away or the
/// server is stopping) and its task (which makes grpc-swift's handle, so that handlers find it
/// as a task-local): whichever comes second acts, so a cancellation that comes before the
/// handle is not lost.
final class CancellationBox: Sendable {
    private let state = Mutex<(handle: ServerContext.RPCCancellationHandle?, cancelled: Bool)>((nil, false))

    /// The call's task made its handle: cancelled at once if the call already was.
    func set(_ handle: ServerContext.RPCCancellationHandle) {
        let cancelled = state.withLock { state in
            state.handle = handle
            return state.cancelled
        }
        if cancelled { handle.cancel() }
    }

    /// Cancels the call (now, or as soon as its handle is made).
    func cancel() {
        let handle = state.withLock { state in
            state.cancelled = true
            return state.handle
        }
        handle?.cancel()
    }
}
