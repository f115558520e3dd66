@_spi(Records) import EventStoreCore
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension EventStore {
    /// Copies the store to `destination` (a new or empty directory, created with mode 0700; the
    /// copied data file gets mode 0600) in one consistent snapshot, while writers go on; `compact`
    /// leaves out free pages. The copy opens as a store of its own, and verifies clean when the
    /// store does: it is a copy of the pages, damage included.
    ///
    /// Cancelling the task stops the copy: what was copied is removed and it throws
    /// `CancellationError`. Any failure (a full disk) removes the partial copy too, so the same
    /// destination can be given again.
    ///
    /// Throws ``EventStoreError`` with ``EventStoreError/Code/invalidInput`` when the destination
    /// exists and is not an empty directory or its parent does not exist, ``EventStoreError/Code/storeUnavailable``
    /// when it cannot be created (no permission), and LMDB's errors (a full disk).
    public func backup(to destination: String, compact: Bool = false) async throws {
        var info = stat()
        var createdDirectory = false
        if stat(destination, &info) == 0 {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: destination)) ?? ["?"]
            guard (info.st_mode & S_IFMT) == S_IFDIR, entries.isEmpty else {
                throw EventStoreError(
                    .invalidInput, "The backup destination '\(destination)' exists and is not an empty directory; give a new path.")
            }
        } else if mkdir(destination, 0o700) != 0 {
            // The destination is the caller's argument: a parent that is missing is a wrong path,
            // not an unavailable store.
            if errno == ENOENT || errno == ENOTDIR {
                throw EventStoreError(
                    .invalidInput, "The backup destination '\(destination)' is not in an existing directory; create its parent first or give another path.")
            }
            throw EventStoreError.system("creating the backup directory '\(destination)'")
        } else {
            createdDirectory = true
        }
        let copied = destination + "/" + StoreDirectory.dataFileName
        // The events are no less private in a backup than in the store: the file is the owner's.
        let descriptor = open(copied, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let error = EventStoreError.system("creating the backup file '\(copied)'")
            if createdDirectory { rmdir(destination) }
            throw error
        }
        let copy = BackupCopy(descriptor: descriptor)
        do {
            let environment = environment
            try await withTaskCancellationHandler {
                try await copy.run { descriptor in try environment.copy(to: descriptor, compact: compact) }
            } onCancel: {
                copy.abandon()
            }
            if copy.wasAbandoned { throw CancellationError() }
        } catch {
            unlink(copied)
            if createdDirectory { rmdir(destination) }
            throw error
        }
    }
}

/// One backup's copy into a file, on a thread of its own (LMDB's copy blocks), and the way to
/// stop it: LMDB's copy cannot be interrupted, so an abandoned copy has its descriptor pointed
/// at /dev/null, where the rest of it goes at once, and the caller removes the file.
///
/// `@unchecked Sendable`: the descriptor is touched by the copying thread until `run` ends it,
/// and by `abandon` only under `state`'s lock while the copy runs.
private final class BackupCopy: @unchecked Sendable {
    private enum Phase { case running, abandoned, finished }
    private let descriptor: Int32
    private let state = Mutex(Phase.running)

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    var wasAbandoned: Bool { state.withLock { $0 == .abandoned } }

    /// Runs `body` with the descriptor on a new thread, flushes the file to disk unless the copy
    /// was abandoned, then closes the descriptor.
    func run(_ body: @escaping @Sendable (Int32) throws -> Void) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let thread = Thread { [self] in
                var result = Result { try body(descriptor) }
                state.withLock { phase in
                    if phase == .running {
                        phase = .finished
                        if case .success = result, fsync(descriptor) != 0 {
                            result = .failure(EventStoreError.system("flushing the backup file"))
                        }
                    }
                    close(descriptor)
                }
                continuation.resume(with: result)
            }
            thread.name = "EventStore.backup"
            thread.start()
        }
    }

    /// Sends the rest of the copy to /dev/null; nothing once the copy has ended.
    func abandon() {
        state.withLock { phase in
            guard phase == .running else { return }
            phase = .abandoned
            let sink = open("/dev/null", O_WRONLY | O_CLOEXEC)
            guard sink >= 0 else { return }
            dup2(sink, descriptor)
            close(sink)
        }
    }
}
