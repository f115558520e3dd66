import CLMDB
import EventStore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Which failures say the store refuses this process's writes (and reading it may work), and
/// which say something reading would not cure.
@Suite("Errors that refuse writing")
struct WriteRefusalTests {
    @Test("permission and read-only failures refuse writing; unreachable servers, full disks and other failures do not")
    func refusesWriting() {
        let refusals = [
            EventStoreError(.storeUnavailable, "read-only", cause: .lmdb(code: EACCES, description: "")),
            EventStoreError(.storeUnavailable, "read-only", cause: .system(errno: EROFS, description: "")),
            EventStoreError(.storeUnavailable, "standby", cause: .database(code: "25006", description: "")),
            EventStoreError(.storeUnavailable, "no privilege", cause: .database(code: "42501", description: "")),
        ]
        for error in refusals { #expect(error.refusesWriting, "\(error)") }
        let others = [
            EventStoreError(.storeUnavailable, "Cannot reach PostgreSQL"),
            EventStoreError(.storeUnavailable, "starting up", cause: .database(code: "57P03", description: "")),
            EventStoreError(.storeUnavailable, "readers", cause: .lmdb(code: MDB_READERS_FULL, description: "")),
            EventStoreError(.storageFull, "full", cause: .system(errno: EACCES, description: "")),
            EventStoreError(.storeUnavailable, "replaced", cause: .system(errno: ENOENT, description: "")),
        ]
        for error in others { #expect(!error.refusesWriting, "\(error)") }
    }
}
