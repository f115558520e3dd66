import Synchronization

/// A channel with no buffer between tasks: a sender waits until the receiver has taken its
/// element and come back for the next one (or the handoff has finished), so a producer never
/// runs ahead of the consumer: while the receiver works on one element (writes it to a slow
/// socket), the producer holds nothing new (the live streams' bound on memory for a slow
/// client). Several senders may wait; they are served in order.
///
/// Finishing it wakes everyone: waiting senders get `false`, the receiver nil. A cancelled
/// sender or receiver returns the same way.
final class Handoff<Element: Sendable>: Sendable {
    private struct Sender {
        let id: UInt64
        let element: Element
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct Receiver {
        let id: UInt64
        let continuation: CheckedContinuation<Element?, Never>
    }

    private struct State {
        var senders: [Sender] = []
        var receiver: Receiver?
        /// The sender whose element the receiver took last: it returns when the receiver comes
        /// back for the next one.
        var taken: (id: UInt64, continuation: CheckedContinuation<Bool, Never>)?
        var isFinished = false
        var nextID: UInt64 = 0
    }

    private enum SendOutcome { case taken(CheckedContinuation<Element?, Never>), refused, waiting }
    private enum ReceiveOutcome { case sent(Sender), ended, waiting }

    /// Releases the sender whose element was taken last (the receiver is back for more).
    private func releaseTaken(_ state: inout State) -> CheckedContinuation<Bool, Never>? {
        defer { state.taken = nil }
        return state.taken?.continuation
    }

    private let state = Mutex(State())

    private func makeID() -> UInt64 {
        state.withLock { state in
            state.nextID &+= 1
            return state.nextID
        }
    }

    /// Hands `element` to the receiver, waiting until it has taken it and asked for the next.
    /// Returns false when the handoff has finished or the task is cancelled (the element dropped,
    /// or taken and not yet done with).
    func send(_ element: Element) async -> Bool {
        let id = makeID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let outcome = state.withLock { state -> SendOutcome in
                    // Checked under the lock: a cancellation that came before this registration
                    // found nothing to remove, so it is honoured here.
                    if state.isFinished || Task.isCancelled { return .refused }
                    if let receiver = state.receiver {
                        state.receiver = nil
                        state.taken = (id, continuation)
                        return .taken(receiver.continuation)
                    }
                    state.senders.append(Sender(id: id, element: element, continuation: continuation))
                    return .waiting
                }
                switch outcome {
                case let .taken(receiver):
                    receiver.resume(returning: element)
                case .refused:
                    continuation.resume(returning: false)
                case .waiting:
                    break
                }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                if let taken = state.taken, taken.id == id {
                    state.taken = nil
                    return taken.continuation
                }
                guard let index = state.senders.firstIndex(where: { $0.id == id }) else { return nil }
                return state.senders.remove(at: index).continuation
            }
            continuation?.resume(returning: false)
        }
    }

    /// The next element, waiting for a sender; nil when the handoff has finished or the task is
    /// cancelled. Asking for it releases the sender of the element taken before. One receiver at
    /// a time.
    func receive() async -> Element? {
        let id = makeID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
                let (outcome, done) = state.withLock { state -> (ReceiveOutcome, CheckedContinuation<Bool, Never>?) in
                    let done = releaseTaken(&state)
                    if state.isFinished || Task.isCancelled { return (.ended, done) }
                    if !state.senders.isEmpty {
                        let sender = state.senders.removeFirst()
                        state.taken = (sender.id, sender.continuation)
                        return (.sent(sender), done)
                    }
                    state.receiver = Receiver(id: id, continuation: continuation)
                    return (.waiting, done)
                }
                done?.resume(returning: true)
                switch outcome {
                case let .sent(sender):
                    continuation.resume(returning: sender.element)
                case .ended:
                    continuation.resume(returning: nil)
                case .waiting:
                    break
                }
            }
        } onCancel: {
            let receiver = state.withLock { state -> Receiver? in
                guard let receiver = state.receiver, receiver.id == id else { return nil }
                state.receiver = nil
                return receiver
            }
            receiver?.continuation.resume(returning: nil)
        }
    }

    /// Ends the handoff: waiting and later senders get false (the one whose element was taken
    /// last, true), the receiver nil.
    func finish() {
        let (senders, receiver, done) = state.withLock { state -> ([Sender], Receiver?, CheckedContinuation<Bool, Never>?) in
            state.isFinished = true
            defer {
                state.senders.removeAll()
                state.receiver = nil
            }
            return (state.senders, state.receiver, releaseTaken(&state))
        }
        done?.resume(returning: true)
        for sender in senders { sender.continuation.resume(returning: false) }
        receiver?.continuation.resume(returning: nil)
    }
}
