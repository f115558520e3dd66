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
    /// those forgotten marked so. Data that is not an envelope comes back as it is. Read in place
    /// (``openedInPlace(_:id:key:)``) where it can be, else by ``openedGenerally(_:id:key:)``.
    package static func open(_ data: Data, id: UUID, key: (String) throws -> SubjectKey?) rethrows -> (data: Data, personal: [PersonalData]) {
        if let opened = try openedInPlace(data, id: id, key: key) { return opened }
        return try openedGenerally(data, id: id, key: key)
    }

    /// ``open(_:id:key:)`` for any data: the envelope parsed into its parts and its payload's
    /// members, the payload put together again from them.
    static func openedGenerally(_ data: Data, id: UUID, key: (String) throws -> SubjectKey?) rethrows -> (data: Data, personal: [PersonalData]) {
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

    static func decrypt(_ part: Part, id: UUID, index: Int, key: SubjectKey?) -> [UInt8]? {
        guard let key, let keyID = part.keyID, key.id == keyID, let sealed = part.sealed,
            let box = try? AES.GCM.SealedBox(combined: sealed),
            let plaintext = try? AES.GCM.open(box, using: key.symmetricKey, authenticating: associatedData(id: id, subject: part.subject))
        else { return nil }
        return Array(plaintext)
    }

    private static func parse(_ data: Data) -> (parts: [Part], rest: [UInt8]?)? {
        let bytes = [UInt8](data)
        guard let members = try? JSONScanner.members(ofObject: bytes), members.first?.key == "$personal" else { return nil }
        let array = Array(bytes[members[0].value])
        guard let elements = try? JSONScanner.elements(ofArray: array) else { return nil }
        var parts: [Part] = []
        parts.reserveCapacity(elements.count)
        let parsed: Bool = array.withUnsafeBytes { raw in
            for element in elements {
                guard let part = self.part(UnsafeRawBufferPointer(rebasing: raw[element])) else { return false }
                parts.append(part)
            }
            return true
        }
        guard parsed, !parts.isEmpty else { return nil }
        return (parts, members.first(where: { $0.key == "data" }).map { Array(bytes[$0.value]) })
    }

    /// One part of the envelope, read in place, as a JSON value's lookup by key would read it
    /// (the first member of each name counts); nil when it is no object or has no subject.
    static func part(_ raw: UnsafeRawBufferPointer) -> Part? {
        var reader = PartReader()
        do {
            try JSONScanner.forEachMember(ofObject: raw) { keyRange, valueRange in
                reader.take(UnsafeRawBufferPointer(rebasing: raw[keyRange]), UnsafeRawBufferPointer(rebasing: raw[valueRange]))
            }
        } catch {
            return nil
        }
        return reader.part
    }

    /// ``part(_:)`` for the object at `start` of `raw`, at nesting `depth` (see
    /// ``JSONScanner/forEachMember(ofObjectIn:at:depth:_:)``): the part (nil when it has no
    /// subject) and the offset just after the object. Throws when it is no object.
    static func part(in raw: UnsafeRawBufferPointer, at start: Int, depth: Int) throws(JSONError) -> (part: Part?, end: Int) {
        var reader = PartReader()
        let end = try JSONScanner.forEachMember(ofObjectIn: raw, at: start, depth: depth) { keyRange, valueRange in
            reader.take(UnsafeRawBufferPointer(rebasing: raw[keyRange]), UnsafeRawBufferPointer(rebasing: raw[valueRange]))
        }
        return (reader.part, end)
    }

    /// The members of a part as they are read, the first of each name kept.
    private struct PartReader {
        var subject: UnsafeRawBufferPointer?
        var fields: UnsafeRawBufferPointer?
        var keyID: UnsafeRawBufferPointer?
        var sealed: UnsafeRawBufferPointer?

        /// Takes one member: its key (quotes included) and its value.
        mutating func take(_ quoted: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) {
            // Our envelopes' keys have no escapes; one that has is compared decoded.
            let inner = UnsafeRawBufferPointer(rebasing: quoted[1..<(quoted.count - 1)])
            let decoded = inner.contains(UInt8(ascii: "\\")) ? Array((try? JSONScanner.string(quoted))?.utf8 ?? "".utf8) : nil
            func isKey(_ name: [UInt8]) -> Bool { decoded.map { $0 == name } ?? inner.elementsEqual(name) }
            if subject == nil, isKey(PersonalEnvelope.subjectKey) {
                subject = value
            } else if fields == nil, isKey(PersonalEnvelope.fieldsKey) {
                fields = value
            } else if keyID == nil, isKey(PersonalEnvelope.keyKey) {
                keyID = value
            } else if sealed == nil, isKey(PersonalEnvelope.sealedKey) {
                sealed = value
            }
        }

        /// The part, once every member was taken; nil without a subject.
        var part: Part? {
            guard let subject = subject.flatMap(JSONFields.string) else { return nil }
            return Part(
                subject: subject, fields: fields.flatMap(PersonalEnvelope.strings),
                keyID: keyID.flatMap(JSONFields.string).flatMap(PersonalEnvelope.hexBytes),
                sealed: sealed.flatMap(JSONFields.string).flatMap { Data(base64Encoded: $0) }.map { Array($0) })
        }
    }

    private static let subjectKey = Array("subject".utf8)
    private static let fieldsKey = Array("fields".utf8)
    private static let keyKey = Array("key".utf8)
    private static let sealedKey = Array("sealed".utf8)

    /// The strings of an array (its other elements left out); nil when it is no array.
    private static func strings(_ raw: UnsafeRawBufferPointer) -> [String]? {
        guard raw.first == UInt8(ascii: "["), let elements = try? JSONScanner.elements(ofArray: Array(raw)) else { return nil }
        return elements.compactMap { JSONFields.string(UnsafeRawBufferPointer(rebasing: raw[$0])) }
    }

    private static func hexBytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func nibble(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
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
