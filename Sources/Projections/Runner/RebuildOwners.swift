import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which rebuilds are under way: those of this process (registered while its runners run them)
/// and those whose recorded owner is a living process. A rebuild whose owner died (a kill -9)
/// is abandoned: its old state serves until a runner finishes it.
enum RebuildOwners {
    /// This process's id, as rebuild records keep it.
    static var thisProcess: Int64 { Int64(getpid()) }

    /// Store path and projection name of each rebuild a runner of this process is running.
    private static let registered = Mutex<[String: Int]>([:])

    private static func key(_ store: String, _ projection: String) -> String { store + "\u{0}" + projection }

    /// Marks the rebuilds of `projections` as run by this process until `body` returns.
    static func running<T>(_ store: String, _ projections: [String], _ body: () async throws -> T) async rethrows -> T {
        registered.withLock { registered in for name in projections { registered[key(store, name), default: 0] += 1 } }
        defer {
            registered.withLock { registered in
                for name in projections {
                    let key = key(store, name)
                    let count = registered[key] ?? 1
                    registered[key] = count > 1 ? count - 1 : nil
                }
            }
        }
        return try await body()
    }

    /// Whether the rebuild recorded with `owner` is being run now: by a runner of this process,
    /// or by another process that is alive (same host: LMDB stores are not shared across hosts).
    static func isRunning(owner: Int64, store: String, projection: String) -> Bool {
        if owner == thisProcess { return registered.withLock { $0[key(store, projection)] != nil } }
        guard owner > 0, owner <= Int64(Int32.max) else { return false }
        return kill(pid_t(owner), 0) == 0 || errno == EPERM
    }
}
