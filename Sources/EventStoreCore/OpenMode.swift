/// How `EventStore.init(path:mode:configuration:)` treats the directory it is given.
public enum OpenMode: Sendable, Equatable {
    /// Open the store, creating the directory and an empty store when there is none: for
    /// programs that write.
    case createIfMissing
    /// Open an existing store for reading and writing; a path without one is
    /// ``EventStoreError/Code/notFound`` and nothing is created.
    case existing
    /// Open an existing store for reading only (LMDB's read-only mode): nothing is ever written
    /// to its data file, it works on a store the process may not write (read-only files or
    /// media), and appends and table writes throw ``EventStoreError/Code/storeUnavailable``.
    /// A path without a store is ``EventStoreError/Code/notFound``.
    case readOnly
}
