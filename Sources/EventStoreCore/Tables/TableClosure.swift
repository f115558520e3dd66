/// Whether the current task runs inside a table transaction's closure (``LogTables``). Such a
/// closure must not wait for other work of its store: a write transaction holds the tables'
/// lock (on LMDB, the writer thread) until it returns, so an append or a table write from
/// inside it would wait forever. The backends refuse those calls at once instead.
package enum TableClosure {
    @TaskLocal package static var isRunning = false

    /// Throws ``EventStoreError/Code/invalidInput`` when called from inside a table closure;
    /// `operation` names what was called, for the message.
    package static func checkOutside(_ operation: String) throws(EventStoreError) {
        guard isRunning else { return }
        throw EventStoreError(
            .invalidInput,
            "The store was called (\(operation)) from inside a table transaction's closure, which would wait for itself; copy what you need out of the closure and call the store after it returns.")
    }
}
