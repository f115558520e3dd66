// The module users import: the store's whole API (EventStoreCore) and its embedded backend on
// LMDB (EventStoreLMDB), so that `import EventStore` gives what it always gave. A program that
// wants only the PostgreSQL backend imports EventStorePostgres, which links no LMDB.
@_exported import EventStoreCore
@_exported import EventStoreLMDB
