/// Looking at a store from outside: counts and sizes, and a check of the backend's own invariants.
public protocol LogInspection: StoreHandle {
    /// Counts and sizes, from one snapshot.
    func statistics() async throws -> StoreStatistics

    /// Checks the backend's own invariants (gapless positions, indexes that agree with the log,
    /// checksums) and reports every problem found.
    func verify() async throws -> VerificationReport
}
