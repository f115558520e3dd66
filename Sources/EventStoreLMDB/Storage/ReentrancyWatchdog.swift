@_spi(Records) import EventStoreCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Knows whether the current thread is inside one of the store's transactions (a read, a table
/// transaction's closure, `forEachEvent`'s closure, a writer job), so that calling the store from
/// there is caught before it can deadlock: a nested read waits behind a writer that waits for the
/// outer one, and closing from inside waits for itself. As GRDB's scheduling watchdog does, with
/// a per-thread marker.
///
/// A misuse is a precondition failure in debug builds (it is a programming error, best seen at
/// once) and ``EventStoreError/Code/invalidInput`` in release builds.
package enum ReentrancyWatchdog {
    /// The per-thread depth of store transactions.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// Tests set it to see the release build's error in a debug build.
    package static let throwsInDebugBuilds = Atomic<Bool>(false)

    /// Whether the current thread is inside a store transaction.
    static var isInsideTransaction: Bool { pthread_getspecific(key) != nil }

    /// Runs `body` marked as inside a transaction.
    @inline(__always)
    static func inside<R>(_ body: () throws -> R) rethrows -> R {
        let outer = pthread_getspecific(key)
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: (Int(bitPattern: outer) &+ 1)))
        defer { pthread_setspecific(key, outer) }
        return try body()
    }

    /// Throws (or, in a debug build, stops the program) when the current thread is inside a store
    /// transaction; `operation` names what was called, for the message.
    @inline(__always)
    static func check(_ operation: String) throws(EventStoreError) {
        guard isInsideTransaction else { return }
        let error = EventStoreError(
            .invalidInput,
            "The store was called (\(operation)) from inside a read or a table transaction's closure; copy what you need out of the closure and call the store after it returns.")
        #if DEBUG
        if !throwsInDebugBuilds.load(ordering: .relaxed) { preconditionFailure(error.message) }
        #endif
        throw error
    }
}
