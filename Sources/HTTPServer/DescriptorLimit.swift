import Foundation

/// The process's limit on open files (descriptors): every connection takes one, and a process
/// that runs out cannot even read its own status files, so the server sizes its connection cap
/// from this limit.
enum DescriptorLimit {
    /// The soft limit now (`ulimit -n`); 1,024 when it cannot be read.
    static var current: Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        return Int(clamping: min(limit.rlim_cur, rlim_t(Int32.max)))
    }

    /// Raises the soft limit to the hard one (allowed to any process) and returns the soft limit
    /// then in force.
    @discardableResult
    static func raiseToHard() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return current }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return current
    }
}
