import Foundation

/// What ``EventLog/forget(_:)`` did.
public struct SubjectForgetting: Sendable, Equatable {
    /// The subject.
    public let subject: String
    /// The id of the key destroyed (32 hex digits); nil when the subject had no key: nothing
    /// sealed for it is readable (it never had data marked personal here, or was forgotten
    /// already; data appended without marks is not the store's to forget), and this forget
    /// wrote nothing of its own.
    public let keyID: String?
    /// The positions of the `$ForgetRequested` and `$SubjectForgotten` events; nil when nothing was written.
    public let requestPosition: UInt64?
    public let forgottenPosition: UInt64?
    /// False when no data was ever marked personal to the subject in this store (a typo in a
    /// subject looks like this, not like a forget).
    public let isKnown: Bool

    /// True when the subject had nothing left to forget: forgotten before, or unknown here.
    public var wasAlreadyForgotten: Bool { keyID == nil }

    package init(subject: String, keyID: String?, requestPosition: UInt64?, forgottenPosition: UInt64?, isKnown: Bool = true) {
        self.subject = subject
        self.keyID = keyID
        self.requestPosition = requestPosition
        self.forgottenPosition = forgottenPosition
        self.isKnown = isKnown
    }
}

/// The system events of forgetting, in the stream `$forgotten`: `$ForgetRequested` then
/// `$SubjectForgotten`, each `{"subject":S,"key":"KEYID"}`.
package enum Forgetting {
    package static let systemStream = "$forgotten"
    package static let requestType = "$ForgetRequested"
    package static let forgottenType = "$SubjectForgotten"

    static func event(_ type: String, subject: String, keyID: String) -> NewEvent {
        NewEvent(type: type, data: Data("{\"subject\":\(JSONWriter.quote(subject)),\"key\":\"\(keyID)\"}".utf8))
    }

    /// The subject and key id a forgetting event names.
    static func parse(_ event: RecordedEvent) -> (subject: String, keyID: String)? {
        guard let value = try? JSONValue(parsing: [UInt8](event.data)), let subject = value["subject"]?.stringValue,
            let key = value["key"]?.stringValue
        else { return nil }
        return (subject, key)
    }

    /// What an open (or a forget) has left to finish: keys to destroy, forgotten events to append.
    package struct Pending: Sendable {
        package var destroy: [(subject: String, keyID: String)] = []
        package var toRecord: [(subject: String, keyID: String)] = []
        package var version: UInt64 = 0
        /// The `$SubjectForgotten` events the requests found without one need.
        package var forgottenEvents: [NewEvent] { toRecord.map { Forgetting.event(Forgetting.forgottenType, subject: $0.subject, keyID: $0.keyID) } }
    }

    /// Reads `$forgotten` past the version this key table was last checked at: requests with
    /// no forgotten event after them are pending, and a forgotten event's key must be gone
    /// (a key table restored from before the forget brings it back). Costs nothing when
    /// nothing happened since.
    package static func pending(in txn: TableTransaction) async throws -> Pending {
        var result = Pending()
        result.version = try await txn.streamVersion(systemStream)
        let checked = try await SubjectKeys.checkedVersion(in: txn)
        guard result.version > checked else { return result }
        var requested: [(subject: String, keyID: String)] = []
        try await txn.forEachEvent(inStream: systemStream, from: checked + 1) { event in
            guard let (subject, keyID) = parse(event) else { return }
            if event.type == requestType {
                requested.append((subject, keyID))
            } else if event.type == forgottenType {
                requested.removeAll { $0.subject == subject && $0.keyID == keyID }
                result.destroy.append((subject, keyID))
            }
        }
        result.toRecord = requested
        result.destroy += requested
        return result
    }

    /// Destroys the keys `pending` names and marks `$forgotten` checked through the version it
    /// was read at (never further: a request another process appends meanwhile is read next time).
    package static func finish(_ pending: Pending, in txn: TableTransaction) async throws {
        try await destroyKeys(pending, in: txn)
        try await SubjectKeys.setCheckedVersion(pending.version, in: txn)
    }

    /// Destroys the keys `pending` names (those still there) and drops every command snapshot
    /// when one went: a snapshot may hold what was folded from the subject's data.
    static func destroyKeys(_ pending: Pending, in txn: TableTransaction) async throws {
        var destroyed = false
        for (subject, keyID) in pending.destroy {
            let key = try await SubjectKeys.key(of: subject, in: txn)
            if let key, key.idText == keyID, try await SubjectKeys.destroy(subject, id: key.id, in: txn) { destroyed = true }
        }
        if destroyed { try await txn.removeAll(SnapshotRows.table) }
    }
}

extension EventLog {
    /// Forgets `subject`: destroys its key, so that every read path from then on shows its
    /// personal data as forgotten (`{"$forgotten":"SUBJECT"}`), and no plaintext of it can be
    /// recovered from the store. Three steps, each its own transaction and each safe to repeat:
    /// a `$ForgetRequested` event, the key's destruction (with every command snapshot, and a
    /// count that makes projections that consume types with personal data rebuild), a
    /// `$SubjectForgotten` event. A crash between two steps is finished by the next open for
    /// writing. Forgetting a subject with no key (never had personal data here, or forgotten
    /// already) writes nothing. A later append with data personal to the subject gets a new key.
    ///
    /// Throws ``EventStoreError/Code/invalidInput`` for a bad subject name, and the store's errors.
    @discardableResult
    public func forget(_ subject: String) async throws -> SubjectForgetting {
        try await forget(subject, onlyKey: nil)
    }

    /// Forgets `subject` as ``forget(_:)`` does, but when `keyID` is given only if its key is
    /// that one: a copy replaying a source's `$SubjectForgotten` forgets a key restored from the
    /// source (a backup), never one it made itself for data the source can still read.
    package func forget(_ subject: String, onlyKey keyID: String?) async throws -> SubjectForgetting {
        try Limits.validateName(subject, kind: "subject")
        try await openTables([SubjectKeys.table, SnapshotRows.table])
        try await finishForgetting()
        let (found, known) = try await readTables { txn in
            (try await SubjectKeys.key(of: subject, in: txn), try await SubjectKeys.wasForgotten(subject, in: txn))
        }
        guard let key = found, keyID == nil || key.idText == keyID else {
            return SubjectForgetting(subject: subject, keyID: nil, requestPosition: nil, forgottenPosition: nil, isKnown: found != nil || known)
        }
        // Each step appends at any version: forgets of other subjects (or an open finishing
        // this one) may come between, and `finishForgetting` pairs requests with their ends.
        let keyID = key.idText
        let request = try await SystemWrites.$isActive.withValue(true) {
            try await append(to: Forgetting.systemStream, events: [Forgetting.event(Forgetting.requestType, subject: subject, keyID: keyID)])
        }
        var pending = Forgetting.Pending()
        pending.destroy = [(subject, keyID)]
        try await writeTables { [pending] txn in try await Forgetting.destroyKeys(pending, in: txn) }
        let forgotten = try await SystemWrites.$isActive.withValue(true) {
            try await append(to: Forgetting.systemStream, events: [Forgetting.event(Forgetting.forgottenType, subject: subject, keyID: keyID)])
        }
        // Marks `$forgotten` as checked through here, so the next open reads nothing.
        try await finishForgetting()
        return SubjectForgetting(
            subject: subject, keyID: keyID, requestPosition: request.positions.first, forgottenPosition: forgotten.positions.first)
    }

    /// Finishes what forgets left undone (a crash between their steps), and destroys again any
    /// key a forgotten event names that a restored key table brought back. Opens for writing
    /// call it; so does every forget first.
    package func finishForgetting() async throws {
        try await openTables([SubjectKeys.table, SnapshotRows.table])
        let (pending, checked) = try await readTables { txn in
            (try await Forgetting.pending(in: txn), try await SubjectKeys.checkedVersion(in: txn))
        }
        guard pending.version > checked else { return }
        if pending.toRecord.isEmpty {
            try await writeTables { [pending] txn in try await Forgetting.finish(pending, in: txn) }
            return
        }
        _ = try await SystemWrites.$isActive.withValue(true) {
            try await append([StreamAppend(stream: Forgetting.systemStream, events: pending.forgottenEvents)]) { [pending] txn, _ in
                try await Forgetting.finish(pending, in: txn)
            }
        }
    }
}
