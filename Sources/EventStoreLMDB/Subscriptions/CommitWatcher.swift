@_spi(Records) import EventStoreCore
import CLMDB
import Synchronization

/// Notices commits made by any process, cheaply: LMDB's last transaction id sits in the shared
/// meta page, so comparing it with the last one seen costs no transaction. Only when it changed
/// is the head read.
///
/// The meta page shows a commit's id while the committing process is still flushing it, before
/// new read transactions can see the commit. So what counts as seen is the id of the snapshot
/// the head was read from, never the meta page's: a commit caught in that window is noticed
/// again on the next check.
final class CommitWatcher: Sendable {
    private let environment: Environment
    private let lastSeen: Atomic<Int>

    init(environment: Environment) throws(EventStoreError) {
        self.environment = environment
        lastSeen = Atomic(try Self.snapshot(environment).transaction)
    }

    /// The head of the log when a transaction was committed since the last call; nil otherwise.
    func newHead() throws(EventStoreError) -> UInt64? {
        guard try environment.info().me_last_txnid != lastSeen.load(ordering: .relaxed) else { return nil }
        let (transaction, head) = try Self.snapshot(environment)
        lastSeen.store(transaction, ordering: .relaxed)
        return head
    }

    /// The id of a fresh read snapshot and the head it holds.
    private static func snapshot(_ environment: Environment) throws(EventStoreError) -> (transaction: Int, head: UInt64) {
        let databases = environment.databases
        return try environment.read { txn in
            (Int(mdb_txn_id(txn.handle)), try Writer.lastPosition(txn, databases))
        }
    }
}
