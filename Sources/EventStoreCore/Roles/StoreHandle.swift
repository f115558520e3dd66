/// A store opened somewhere, by any backend: where it is, how and with what it was opened, and
/// closing it. Every role of ``EventLog`` refines it, so that code holding any one role can name
/// the store in its messages and use its clock, id generator and logger.
public protocol StoreHandle: AnyObject, Sendable {
    /// Where the store is, fit for messages: a directory, or a database URL without its password.
    var location: String { get }

    /// The configuration the store was opened with (its clock, id generator and logger).
    var configuration: StoreConfiguration { get }

    /// How the store was opened (``OpenMode/readOnly`` refuses every write).
    var mode: OpenMode { get }

    /// Closes the handle, with the same promise on every backend: new calls are refused at
    /// once; the appends already queued are made (or fail with an error), and their callers get
    /// their results; then the handle's long-lived work ends (its writer, listener, sessions)
    /// and its files or connections are released. Returns when all of that is done.
    /// Idempotent: a call made while another runs returns when that one has finished. Later
    /// calls of the store throw ``EventStoreError/Code/closed``. From inside a table closure it
    /// does nothing (it would wait for that closure's own transaction).
    ///
    /// Backends also have a synchronous `close()` for `deinit` and `defer`, where nothing can be
    /// awaited; see each backend for what it waits for.
    func close() async
}

extension StoreHandle {
    /// Runs `body`, then closes the store and waits until it is closed (`close()`), whether
    /// `body` returned or threw, and returns what `body` returned or rethrows what it threw:
    /// the scoped form of `defer { close() }`, which cannot await.
    public func closingAfter<T>(_ body: () async throws -> T) async throws -> T {
        let result: T
        do {
            result = try await body()
        } catch {
            await close()
            throw error
        }
        await close()
        return result
    }
}
