import Foundation

extension PersonalEnvelope {
    /// ``open(_:id:key:)`` read in place for the envelopes this store writes: the parts and the
    /// payload's members found in the stored bytes without copying them, the parts decrypted, and
    /// the payload put together from the bytes as they are. Nil, before any key is asked for, when
    /// the data takes a shape it leaves to ``openedGenerally(_:id:key:)``: a payload's key or a
    /// sealed field's name that is not plain ASCII (the general path compares them as strings,
    /// where "\u{212A}" is "K"), a payload's key twice, a member beside `$personal` and `data`,
    /// data that is no envelope. Wherever it answers, the two answer alike and ask for the same
    /// keys (`PersonalEnvelopeTests` holds them together). Why: opening sealed fields took 12 %
    /// of a benchmarked rebuild's CPU in a profile, the JSON scanned three times and copied, its
    /// keys made into strings and its members into a dictionary (BENCHMARKS.md, "S3: the envelope
    /// read in place").
    static func openedInPlace(
        _ data: Data, id: UUID, key: (String) throws -> SubjectKey?
    ) rethrows -> (data: Data, personal: [PersonalData])? {
        // The parts, and the payload's members (offsets in `data`) unless one part holds it whole.
        let read: (parts: [Part], members: [Member])? = data.withUnsafeBytes { raw in
            guard SealedData.isSealed(raw), let envelope = Envelope(raw) else { return nil }
            let parts = envelope.parts
            if parts.count == 1 && parts[0].fields == nil { return (parts, []) }
            guard parts.allSatisfy({ $0.fields?.allSatisfy(Self.isPlain) ?? true }),
                let rest = envelope.rest, let members = Self.plainMembers(raw, of: rest)
            else { return nil }
            return (parts, members)
        }
        guard let (parts, members) = read else { return nil }
        var plaintexts: [[UInt8]?] = []
        plaintexts.reserveCapacity(parts.count)
        for part in parts { plaintexts.append(try decrypt(part, id: id, index: plaintexts.count, key: key(part.subject))) }
        let marks = zip(parts, plaintexts).map { PersonalData(subject: $0.subject, fields: $0.fields, isForgotten: $1 == nil) }
        if parts.count == 1 && parts[0].fields == nil {
            return (plaintexts[0].map { Data($0) } ?? PersonalData.forgottenMarker(parts[0].subject), marks)
        }
        // Each plaintext's members as the general path reads them (keys as strings: a sealed
        // object's few keys are small strings, made without allocating); nil for one that is no
        // object of distinct keys, whose fields then read as forgotten.
        let opened = plaintexts.map { plaintext in plaintext.flatMap { try? JSONScanner.members(ofObject: $0) } }
        let payload: [UInt8] = data.withUnsafeBytes { raw in
            var out: [UInt8] = [UInt8(ascii: "{")]
            out.reserveCapacity(raw.count)
            for (index, member) in members.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[member.key]))
                out.append(UInt8(ascii: ":"))
                let name = UnsafeRawBufferPointer(rebasing: raw[(member.key.lowerBound + 1)..<(member.key.upperBound - 1)])
                // The last part that names the field gives its value (as the general path's dictionary does).
                guard let named = parts.lastIndex(where: { $0.fields?.contains { $0.utf8.elementsEqual(name) } ?? false }) else {
                    out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[member.value]))
                    continue
                }
                let field = String(decoding: name, as: UTF8.self)
                if let plaintext = plaintexts[named], let found = opened[named]?.first(where: { $0.key == field }) {
                    out.append(contentsOf: plaintext[found.value])
                } else {
                    out.append(contentsOf: PersonalData.forgottenMarker(parts[named].subject))
                }
            }
            out.append(UInt8(ascii: "}"))
            return out
        }
        return (Data(payload), marks)
    }

    /// A member of an object read in place: its key (quotes included) and its value, as ranges of
    /// the bytes read.
    private typealias Member = (key: Range<Int>, value: Range<Int>)

    /// The envelope's parts and the range of its `data` member, read in place: nil unless it is
    /// `{"$personal":[PART,...]}` or `{"$personal":[PART,...],"data":REST}` with every part read.
    private struct Envelope {
        let parts: [Part]
        let rest: Range<Int>?

        init?(_ raw: UnsafeRawBufferPointer) {
            var rest: Range<Int>?
            var count = 0
            var parts: [Part] = []
            var unread = false
            // One pass: each part is read where it lies, not skipped over first and found again
            // (three scans of the sealed text, a tenth of a rebuild's fold in a profile). Every
            // value nested in the envelope meets the depth limit as the old first scan and the
            // general path's count it: the envelope itself not counted, its array at 1, a part at 2.
            do throws(JSONError) {
                try JSONScanner.forEachMember(ofObject: raw) { keyRange, valueStart throws(JSONError) in
                    count += 1
                    // The first key is `"$personal"` as written (`SealedData.isSealed` checked its bytes).
                    if count == 1 {
                        return try JSONScanner.forEachElement(ofArrayIn: raw, at: valueStart, depth: 1) { elementStart throws(JSONError) in
                            guard raw[elementStart] == UInt8(ascii: "{") else {
                                unread = true
                                return try JSONScanner.value(in: raw, at: elementStart, depth: 1).upperBound
                            }
                            let (part, end) = try PersonalEnvelope.part(in: raw, at: elementStart, depth: 2)
                            if let part { parts.append(part) } else { unread = true }
                            return end
                        }
                    } else if count == 2, UnsafeRawBufferPointer(rebasing: raw[keyRange]).elementsEqual(Self.dataKey) {
                        let value = try JSONScanner.value(in: raw, at: valueStart, depth: 0)
                        rest = value
                        return value.upperBound
                    } else {
                        throw JSONError(message: "a member the general path reads", offset: keyRange.lowerBound)
                    }
                }
            } catch {
                return nil
            }
            guard count > 0, !unread, !parts.isEmpty else { return nil }
            self.parts = parts
            self.rest = rest
        }

        static let dataKey = Array("\"data\"".utf8)
    }

    /// Whether a byte of a key is plain ASCII: printable, not `\` (nor `"`, which ends it).
    private static func isPlain(_ byte: UInt8) -> Bool { byte >= 0x20 && byte < 0x7F && byte != 0x5C }

    /// Whether a field's name is plain ASCII, as the keys the path in place compares its bytes with.
    private static func isPlain(_ name: String) -> Bool { name.utf8.allSatisfy { isPlain($0) && $0 != 0x22 } }

    /// The members of the object at `range` of `raw`, with offsets in `raw`, when it is one whose
    /// keys are plain ASCII, each once; nil otherwise (no object, a key twice or beyond plain
    /// ASCII: the general path compares keys as strings and writes them with `JSONWriter.quote`).
    private static func plainMembers(_ raw: UnsafeRawBufferPointer, of range: Range<Int>) -> [Member]? {
        var members: [Member] = []
        do throws(JSONError) {
            try JSONScanner.forEachMember(ofObject: UnsafeRawBufferPointer(rebasing: raw[range])) { keyRange, valueRange throws(JSONError) in
                let key = (keyRange.lowerBound + range.lowerBound)..<(keyRange.upperBound + range.lowerBound)
                guard raw[(key.lowerBound + 1)..<(key.upperBound - 1)].allSatisfy(Self.isPlain),
                    !members.contains(where: { raw[$0.key].elementsEqual(raw[key]) })
                else { throw JSONError(message: "a key the general path reads", offset: key.lowerBound) }
                members.append((key, (valueRange.lowerBound + range.lowerBound)..<(valueRange.upperBound + range.lowerBound)))
            }
        } catch {
            return nil
        }
        return members
    }
}
