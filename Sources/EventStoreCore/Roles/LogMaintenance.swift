/// Deleting and retaining: streams deleted (soft, or hard with a tombstone), retention policies
/// and the purge that applies them, and what the store knows of a stream.
public protocol LogMaintenance: StoreHandle {
    /// Deletes a stream's events (soft, or hard with a tombstone); see `EventStore.deleteStream(_:expectedVersion:hard:)`.
    func deleteStream(_ stream: String, expectedVersion: ExpectedVersion, hard: Bool) async throws -> StreamDeletion

    /// Sets a stream's retention policy; see `EventStore.setRetention(_:for:)`.
    func setRetention(_ policy: RetentionPolicy, for stream: String) async throws

    /// Applies every stream's retention policy now; see `EventStore.purge()`.
    func purge() async throws -> [StreamDeletion]

    /// What the store knows of a stream (versions, event count, tombstone, policy); nil when it
    /// never had an event.
    func streamInfo(_ stream: String) async throws -> StreamInfo?
}
