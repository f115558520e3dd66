import Synchronization

/// A channel with no buffer between tasks: a sender waits until the receiver has taken its
/// element, so a producer runs at most one element ahead of the consumer (the live streams'
/// bound on memory for a slow client). Several senders may wait; they are served in order.
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
        var isFinished = false
        var nextID: UInt64 = 0
    }

    private enum SendOutcome { case taken(CheckedContinuation<Element?, Never>), refused, waiting }
    private enum ReceiveOutcome { case sent(Sender), ended, waiting }

    private let state = Mutex(State())

    private func makeID() -> UInt64 {
        state.withLock { state in
            state.nextID &+= 1
            return state.nextID
        }
    }

    /// Hands `element` to the receiver, waiting until it takes it. Returns false, the element
    /// dropped, when the handoff has finished or the task is cancelled.
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
                        return .taken(receiver.continuation)
                    }
                    state.senders.append(Sender(id: id, element: element, continuation: continuation))
                    return .waiting
                }
                switch outcome {
                case let .taken(receiver):
                    receiver.resume(returning: element)
                    continuation.resume(returning: true)
                case .refused:
                    continuation.resume(returning: false)
                case .waiting:
                    break
                }
            }
        } onCancel: {
            let sender = state.withLock { state -> Sender? in
                guard let index = state.senders.firstIndex(where: { $0.id == id }) else { return nil }
                return state.senders.remove(at: index)
            }
            sender?.continuation.resume(returning: false)
        }
    }

    /// The next element, waiting for a sender; nil when the handoff has finished or the task is
    /// cancelled. One receiver at a time.
    func receive() async -> Element? {
        let id = makeID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
                let outcome = state.withLock { state -> ReceiveOutcome in
                    if state.isFinished || Task.isCancelled { return .ended }
                    if !state.senders.isEmpty { return .sent(state.senders.removeFirst()) }
                    state.receiver = Receiver(id: id, continuation: continuation)
                    return .waiting
                }
                switch outcome {
                case let .sent(sender):
                    sender.continuation.resume(returning: true)
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

    /// Ends the handoff: waiting and later senders get false, the receiver nil.
    func finish() {
        let (senders, receiver) = state.withLock { state -> ([Sender], Receiver?) in
            state.isFinished = true
            defer {
                state.senders.removeAll()
                state.receiver = nil
            }
            return (state.senders, state.receiver)
        }
        for sender in senders { sender.continuation.resume(returning: false) }
        receiver?.continuation.resume(returning: nil)
    }
}
