import Crypto
import Foundation

/// A subject's key: a 256-bit AES key and a random id that tells this key from one the subject
/// gets after being forgotten (data sealed under a destroyed key stays forgotten).
package struct SubjectKey: Sendable, Equatable {
    /// 16 random bytes.
    package let id: [UInt8]
    /// 32 random bytes.
    package let material: [UInt8]

    package init(id: [UInt8], material: [UInt8]) {
        self.id = id
        self.material = material
    }

    /// A new key from the system's random number generator.
    package static func generate() -> SubjectKey {
        var generator = SystemRandomNumberGenerator()
        return SubjectKey(id: (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }, material: SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
    }

    /// The id as 32 lower-case hex digits, as the envelope and the forget events write it.
    package var idText: String { HexText.lowercase(id) }

    var symmetricKey: SymmetricKey { SymmetricKey(data: material) }

    /// The row's value: the id, then the material.
    var row: [UInt8] { id + material }

    init?(row: [UInt8]) {
        guard row.count == 48 else { return nil }
        self.init(id: Array(row[0..<16]), material: Array(row[16..<48]))
    }
}

/// The table of subjects' keys (`$keys`, beside the log on every backend) and the counters that
/// go with forgetting. Rows: `s` + subject → key id and material; `t` + type → nothing (the type
/// has carried personal data); `g` + subject → nothing (a forget destroyed a key of it); `f` → u64 big-endian, forgets completed (projections and snapshots
/// compare it); `c` → u64 big-endian, the version of `$forgotten` whose forgotten events an open
/// has checked against this table (a restored older table is checked again).
package enum SubjectKeys {
    package static let table = "$keys"

    static func subjectKey(_ subject: String) -> [UInt8] { [UInt8(ascii: "s")] + Array(subject.utf8) }
    static func typeKey(_ type: String) -> [UInt8] { [UInt8(ascii: "t")] + Array(type.utf8) }
    static func forgottenKey(_ subject: String) -> [UInt8] { [UInt8(ascii: "g")] + Array(subject.utf8) }
    static let forgetCountKey: [UInt8] = [UInt8(ascii: "f")]
    static let checkedKey: [UInt8] = [UInt8(ascii: "c")]

    /// The subject's key, nil when it has none (never had personal data, or was forgotten).
    package static func key(of subject: String, in txn: TableTransaction) async throws -> SubjectKey? {
        try await txn.get(table, subjectKey(subject)).flatMap(SubjectKey.init(row:))
    }

    /// The subject's key read with `get` (a backend's synchronous read of this table's rows).
    package static func key(of subject: String, reading get: ([UInt8]) throws -> [UInt8]?) rethrows -> SubjectKey? {
        try get(subjectKey(subject)).flatMap(SubjectKey.init(row:))
    }

    /// The subject's key, created when it has none.
    static func keyCreating(of subject: String, in txn: TableTransaction) async throws -> SubjectKey {
        if let key = try await key(of: subject, in: txn) { return key }
        let key = SubjectKey.generate()
        try await txn.put(table, subjectKey(subject), key.row)
        return key
    }

    /// Destroys the subject's key when it is the one named `id`, and counts the forget; true when it did.
    static func destroy(_ subject: String, id: [UInt8], in txn: TableTransaction) async throws -> Bool {
        guard let key = try await key(of: subject, in: txn), key.id == id else { return false }
        _ = try await txn.delete(table, subjectKey(subject))
        try await txn.put(table, forgottenKey(subject), [])
        try await txn.put(table, forgetCountKey, bigEndian(try await forgetCount(in: txn) &+ 1))
        return true
    }

    /// Whether a forget destroyed a key of the subject here.
    static func wasForgotten(_ subject: String, in txn: TableTransaction) async throws -> Bool {
        try await txn.get(table, forgottenKey(subject)) != nil
    }

    /// How many keys forgets have destroyed.
    package static func forgetCount(in txn: TableTransaction) async throws -> UInt64 {
        try await txn.get(table, forgetCountKey).map(uint64) ?? 0
    }

    /// Whether events of `type` have ever carried personal data.
    package static func hasPersonalData(type: String, in txn: TableTransaction) async throws -> Bool {
        try await txn.get(table, typeKey(type)) != nil
    }

    static func notePersonalType(_ type: String, in txn: TableTransaction) async throws {
        if try await txn.get(table, typeKey(type)) == nil { try await txn.put(table, typeKey(type), []) }
    }

    package static func checkedVersion(in txn: TableTransaction) async throws -> UInt64 {
        try await txn.get(table, checkedKey).map(uint64) ?? 0
    }

    /// The same, read with `get` (a backend's synchronous read of this table's rows).
    package static func checkedVersion(reading get: ([UInt8]) throws -> [UInt8]?) rethrows -> UInt64 {
        try get(checkedKey).map(uint64) ?? 0
    }

    static func setCheckedVersion(_ version: UInt64, in txn: TableTransaction) async throws {
        try await txn.put(table, checkedKey, bigEndian(version))
    }

    static func bigEndian(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }

    static func uint64(_ bytes: [UInt8]) -> UInt64 {
        guard bytes.count == 8 else { return 0 }
        return bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }
}
