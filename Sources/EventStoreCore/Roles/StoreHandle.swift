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

    /// Finishes queued appends and closes; later calls throw ``EventStoreError/Code/closed``.
    func close()
}
