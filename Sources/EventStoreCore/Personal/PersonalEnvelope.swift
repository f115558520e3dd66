import Crypto
import Foundation

/// The stored form of an event with personal data, and the ways back from it.
///
/// Stored (compact JSON; docs/FORMAT.md, "Personal data"):
/// `{"$personal":[PART,...],"data":REST}`, where each PART is
/// `{"subject":S,"fields":[F,...]|null,"key":"KEYID","sealed":"BASE64"}` (or, for data already
/// forgotten where it was recorded, `{"subject":S,"fields":...,"forgotten":true}`), REST is the
/// payload with each personal field's value replaced by `0` (absent when a part holds the whole
/// payload), and `sealed` is AES-GCM's nonce, ciphertext and tag of the part's plaintext: the
/// object of its fields, in order (or the whole payload), with the event's id and the subject
/// as associated data. The nonce is derived from a subkey of the key (HKDF), the id, the subject
/// and the part, so a retry of the same event seals to the same bytes (idempotency compares them).
package enum PersonalEnvelope {
    static let prefix = Array("{\"$personal\":".utf8)

    /// Whether stored data is an envelope (see ``SealedData/isSealed(_:)``).
    @inline(__always)
    package static func isSealed(_ data: Data) -> Bool { SealedData.isSealed(data) }

    /// Whether data would be an envelope once in stored form (white space around its first
    /// key ignored): what an append of unmarked data may not look like.
    static func looksSealed(_ data: Data) -> Bool {
        data.withUnsafeBytes { raw in
            var index = 0
            func skipSpace() { while index < raw.count, raw[index] == 0x20 || raw[index] == 0x09 || raw[index] == 0x0A || raw[index] == 0x0D { index += 1 } }
            skipSpace()
            guard index < raw.count, raw[index] == UInt8(ascii: "{") else { return false }
            index += 1
            skipSpace()
            // `"$personal"`, byte by byte: most data parts ways at its second byte.
            for byte in "\"$personal\"".utf8 {
                guard index < raw.count, raw[index] == byte else { return false }
                index += 1
            }
            skipSpace()
            return index < raw.count && raw[index] == UInt8(ascii: ":")
        }
    }

    struct Part {
        var subject: String
        var fields: [String]?
        var keyID: [UInt8]?
        var sealed: [UInt8]?
    }

    // MARK: Sealing

    /// The stored form of `data` with `parts` sealed under `keys` (every part's subject has one).
    /// Throws invalidInput when a named field is missing, named twice, or the data is no object.
    static func seal(_ data: Data, parts: [PersonalData], id: UUID, keys: [String: SubjectKey]) throws(EventStoreError) -> Data {
        let bytes = [UInt8](data)
        var out = "{\"$personal\":["
        if parts.contains(where: { $0.fields == nil }) {
            guard parts.count == 1, let part = parts.first else {
                throw EventStoreError(.invalidInput, "An event marks its whole payload personal and other parts too; mark the whole payload for one subject only.")
            }
            out += try partJSON(part, plaintext: bytes, index: 0, id: id, keys: keys)
            return Data((out + "]}").utf8)
        }
        let members: [(key: String, value: Range<Int>)]
        do {
            members = try JSONScanner.members(ofObject: bytes)
        } catch {
            throw EventStoreError(.invalidInput, "An event marks fields personal, but its data is not a JSON object (\(error.message)); mark the whole payload instead.")
        }
        var personal = Set<String>()
        for (index, part) in parts.enumerated() {
            var plaintext: [UInt8] = [UInt8(ascii: "{")]
            for field in part.fields ?? [] {
                guard personal.insert(field).inserted else {
                    throw EventStoreError(.invalidInput, "The field '\(field)' is marked personal twice; mark each field for one subject.")
                }
                guard let member = members.first(where: { $0.key == field }) else {
                    throw EventStoreError(.invalidInput, "The field '\(field)' is marked personal but the event's data has no such field.")
                }
                if plaintext.count > 1 { plaintext.append(UInt8(ascii: ",")) }
                plaintext += Array("\(JSONWriter.quote(field)):".utf8) + bytes[member.value]
            }
            plaintext.append(UInt8(ascii: "}"))
            if index > 0 { out += "," }
            out += try partJSON(part, plaintext: plaintext, index: index, id: id, keys: keys)
        }
        let rest = object(bytes, members, replacing: Dictionary(uniqueKeysWithValues: personal.map { ($0, [UInt8(ascii: "0")]) }))
        return Data((out + "],\"data\":").utf8) + rest + Data("}".utf8)
    }

    private static func partJSON(
        _ part: PersonalData, plaintext: [UInt8], index: Int, id: UUID, keys: [String: SubjectKey]
    ) throws(EventStoreError) -> String {
        var out = "{\"subject\":\(JSONWriter.quote(part.subject)),\"fields\":"
        out += part.fields.map { "[" + $0.map(JSONWriter.quote).joined(separator: ",") + "]" } ?? "null"
        if part.isForgotten { return out + ",\"forgotten\":true}" }
        guard let key = keys[part.subject] else {
            throw EventStoreError(.storageFailure, "No key was found or made for the subject '\(part.subject)'.")
        }
        let sealed: [UInt8]
        do {
            let box = try AES.GCM.seal(
                plaintext, using: key.symmetricKey, nonce: try nonce(key: key, id: id, subject: part.subject, index: index),
                authenticating: associatedData(id: id, subject: part.subject))
            guard let combined = box.combined else { throw EventStoreError(.storageFailure, "AES-GCM gave no combined form.") }
            sealed = Array(combined)
        } catch let error as EventStoreError {
            throw error
        } catch {
            throw EventStoreError(.storageFailure, "Sealing personal data failed: \(error).")
        }
        return out + ",\"key\":\"\(key.idText)\",\"sealed\":\"\(Data(sealed).base64EncodedString())\"}"
    }

    private static func associatedData(id: UUID, subject: String) -> [UInt8] {
        withUnsafeBytes(of: id.uuid) { Array($0) } + Array(subject.utf8)
    }

    private static func nonce(key: SubjectKey, id: UUID, subject: String, index: Int) throws -> AES.GCM.Nonce {
        let input = associatedData(id: id, subject: subject) + [UInt8(truncatingIfNeeded: index)]
        // A key of its own for nonces, derived from the subject's key, not the AES key itself.
        let nonceKey = HKDF<SHA256>.deriveKey(inputKeyMaterial: key.symmetricKey, info: Array("eventstore personal nonce".utf8), outputByteCount: 32)
        let code = HMAC<SHA256>.authenticationCode(for: input, using: nonceKey)
        return try AES.GCM.Nonce(data: Array(code.prefix(12)))
    }

    // MARK: Opening

    /// What readers see of stored `data`: the payload with each part decrypted, or the
    /// forgotten marker where its subject's key (from `key`) is gone or another; and the parts,
    /// those forgotten marked so. Data that is not an envelope comes back as it is.
    package static func open(_ data: Data, id: UUID, key: (String) throws -> SubjectKey?) rethrows -> (data: Data, personal: [PersonalData]) {
        guard isSealed(data), let (parts, rest) = parse(data) else { return (data, []) }
        var plaintexts: [[UInt8]?] = []
        for part in parts { plaintexts.append(try decrypt(part, id: id, index: plaintexts.count, key: key(part.subject))) }
        let marks = zip(parts, plaintexts).map { PersonalData(subject: $0.subject, fields: $0.fields, isForgotten: $1 == nil) }
        if parts.count == 1, parts[0].fields == nil {
            return (plaintexts[0].map { Data($0) } ?? PersonalData.forgottenMarker(parts[0].subject), marks)
        }
        guard let rest, let members = try? JSONScanner.members(ofObject: rest) else { return (data, []) }
        var values: [String: [UInt8]] = [:]
        for (part, plaintext) in zip(parts, plaintexts) {
            let opened = plaintext.flatMap { try? JSONScanner.members(ofObject: $0) }
            for field in part.fields ?? [] {
                if let plaintext, let member = opened?.first(where: { $0.key == field }) {
                    values[field] = Array(plaintext[member.value])
                } else {
                    values[field] = [UInt8](PersonalData.forgottenMarker(part.subject))
                }
            }
        }
        return (Data(object(rest, members, replacing: values)), marks)
    }

    /// The subjects whose keys opening `data` asks for, in order; none when it is not an envelope.
    package static func subjects(of data: Data) -> [String] {
        guard isSealed(data), let (parts, _) = parse(data) else { return [] }
        return parts.map(\.subject)
    }

    /// `data` as it reads once the `forgotten` parts' subjects are forgotten: each of their
    /// fields (or the whole payload) replaced by the marker; nil when the data does not fit them.
    static func masked(_ data: Data, forgotten parts: [PersonalData]) -> Data? {
        guard !parts.isEmpty else { return data }
        if let whole = parts.first(where: { $0.fields == nil }) { return PersonalData.forgottenMarker(whole.subject) }
        let bytes = [UInt8](data)
        guard let members = try? JSONScanner.members(ofObject: bytes) else { return nil }
        var markers: [String: [UInt8]] = [:]
        for part in parts { for field in part.fields ?? [] { markers[field] = [UInt8](PersonalData.forgottenMarker(part.subject)) } }
        return Data(object(bytes, members, replacing: markers))
    }

    /// The object whose `members` are in `bytes`, in their order, with the values `replacing`
    /// gives for some of their keys (compact: `{"KEY":VALUE,...}`).
    private static func object(_ bytes: [UInt8], _ members: [(key: String, value: Range<Int>)], replacing values: [String: [UInt8]]) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "{")]
        for (index, member) in members.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out += Array("\(JSONWriter.quote(member.key)):".utf8)
            out += values[member.key] ?? Array(bytes[member.value])
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    private static func decrypt(_ part: Part, id: UUID, index: Int, key: SubjectKey?) -> [UInt8]? {
        guard let key, let keyID = part.keyID, key.id == keyID, let sealed = part.sealed,
            let box = try? AES.GCM.SealedBox(combined: sealed),
            let plaintext = try? AES.GCM.open(box, using: key.symmetricKey, authenticating: associatedData(id: id, subject: part.subject))
        else { return nil }
        return Array(plaintext)
    }

    private static func parse(_ data: Data) -> (parts: [Part], rest: [UInt8]?)? {
        let bytes = [UInt8](data)
        guard let members = try? JSONScanner.members(ofObject: bytes), members.first?.key == "$personal",
            let elements = try? JSONScanner.elements(ofArray: Array(bytes[members[0].value]))
        else { return nil }
        let array = Array(bytes[members[0].value])
        var parts: [Part] = []
        for element in elements {
            guard let value = try? JSONScanner.parse(Array(array[element])), let subject = value["subject"]?.stringValue else { return nil }
            parts.append(
                Part(
                    subject: subject, fields: value["fields"]?.arrayValue?.compactMap(\.stringValue),
                    keyID: value["key"]?.stringValue.flatMap(hexBytes),
                    sealed: value["sealed"]?.stringValue.flatMap { Data(base64Encoded: $0) }.map { Array($0) }))
        }
        guard !parts.isEmpty else { return nil }
        return (parts, members.first(where: { $0.key == "data" }).map { Array(bytes[$0.value]) })
    }

    private static func hexBytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var index = 0
        while index < digits.count {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
            index += 2
        }
        return bytes
    }
}

/// The test every read of every event makes, inlinable so that a backend's read loop pays no call
/// for it (SPI: for the backends, not an API).
@_spi(Records) public enum SealedData {
    /// Whether stored data is an envelope: a comparison of its first 13 bytes with
    /// `{"$personal":`, as two 8-byte loads (the first 8 bytes, and bytes 5 to 12), so it turns
    /// most data away at its third byte (`$`), without copying.
    @inlinable
    public static func isSealed(_ data: Data) -> Bool {
        data.withUnsafeBytes { isSealed($0) }
    }

    /// The same test of stored data in place.
    @inlinable
    public static func isSealed(_ raw: UnsafeRawBufferPointer) -> Bool {
        raw.count > 13 && raw[2] == UInt8(ascii: "$")
            && UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self)) == 0x6f73_7265_7024_227b  // {"$perso
            && UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 5, as: UInt64.self)) == 0x3a22_6c61_6e6f_7372  // rsonal":
    }
}
