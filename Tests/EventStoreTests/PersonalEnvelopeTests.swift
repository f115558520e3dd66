@testable import EventStoreCore
import EventStoreJSON
import Foundation
import Testing

/// The envelope of personal data opened in place (``PersonalEnvelope/openedInPlace(_:id:key:)``)
/// against the general path it stands in for: the same data, the same parts, the same keys asked
/// for, on the envelopes the store writes and on odd ones.
@Suite("Personal data's envelope, opened in place and in general")
struct PersonalEnvelopeTests {
    static let id = UUID(uuidString: "6f1c1a52-8a2b-4c3d-9e4f-0a1b2c3d4e5f") ?? UUID()
    static let ann = SubjectKey(id: Array(0..<16), material: Array(repeating: 7, count: 32))
    static let bob = SubjectKey(id: Array(16..<32), material: Array(repeating: 9, count: 32))
    /// Ann's key after a forget: another id and material.
    static let annAgain = SubjectKey(id: Array(32..<48), material: Array(repeating: 11, count: 32))

    /// What one way of opening answered, and the subjects whose keys it asked for, in order.
    struct Opened: Equatable {
        var data: [UInt8]
        var personal: [PersonalData]
        var asked: [String]
    }

    static func opened(_ stored: Data, keys: [String: SubjectKey], inPlace: Bool) -> Opened? {
        var asked: [String] = []
        let lookup: (String) -> SubjectKey? = { subject in
            asked.append(subject)
            return keys[subject]
        }
        let result = inPlace
            ? PersonalEnvelope.openedInPlace(stored, id: id, key: lookup) : PersonalEnvelope.openedGenerally(stored, id: id, key: lookup)
        return result.map { Opened(data: Array($0.data), personal: $0.personal, asked: asked) }
    }

    /// Expects `open` to answer as the general path does for `stored` under each set of keys,
    /// asking for the same keys, and the path in place to answer too when `inPlace` (else to leave
    /// it to the general one).
    static func expectAlike(_ stored: Data, inPlace: Bool, _ comment: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let keySets: [[String: SubjectKey]] = [["ann": ann, "bob": bob], [:], ["ann": annAgain, "bob": bob], ["bob": bob]]
        for keys in keySets {
            let general = opened(stored, keys: keys, inPlace: false)
            let fast = opened(stored, keys: keys, inPlace: true)
            #expect(general != nil, "the general path always answers: \(comment)", sourceLocation: sourceLocation)
            if inPlace {
                #expect(fast == general, "\(comment), keys of \(keys.keys.sorted()): in place \(String(describing: fast)), in general \(String(describing: general))", sourceLocation: sourceLocation)
            } else {
                #expect(fast == nil, "\(comment): left to the general path, but in place answered \(String(describing: fast))", sourceLocation: sourceLocation)
            }
            var asked: [String] = []
            let combined = PersonalEnvelope.open(stored, id: id) { subject in
                asked.append(subject)
                return keys[subject]
            }
            #expect(
                Opened(data: Array(combined.data), personal: combined.personal, asked: asked) == general,
                "open answers as the general path, asking for the same keys: \(comment)", sourceLocation: sourceLocation)
        }
    }

    static func sealed(_ json: String, _ parts: [PersonalData]) throws -> Data {
        try PersonalEnvelope.seal(Data(json.utf8), parts: parts, id: id, keys: ["ann": ann, "bob": bob])
    }

    /// A part around any plaintext: sealed as a whole payload, then given `fields` (a JSON
    /// array), which the seal does not cover (only the key, the event's id and the subject).
    static func part(_ subject: String, fields: String, key: SubjectKey, plaintext: String) throws -> String {
        let whole = try PersonalEnvelope.seal(Data(plaintext.utf8), parts: [PersonalData(subject: subject)], id: id, keys: [subject: key])
        let text = try #require(String(data: whole, encoding: .utf8))
        let prefix = "{\"$personal\":[", suffix = "]}"
        try #require(text.hasPrefix(prefix) && text.hasSuffix(suffix) && text.contains("\"fields\":null"), "\(text)")
        return String(text.dropFirst(prefix.count).dropLast(suffix.count)).replacingOccurrences(of: "\"fields\":null", with: "\"fields\":\(fields)")
    }

    @Test("the envelopes the store writes open in place as in general, with keys, without, and under a newer key")
    func written() throws {
        // Given data as the apps and users seal it
        let cases: [(String, [PersonalData])] = [
            ("{\"user\":\"ann\",\"text\":\"hello\",\"kind\":\"said\"}", [PersonalData(subject: "ann", fields: ["text"])]),
            ("{\"user\":\"ann\",\"text\":\"hello\"}", [PersonalData(subject: "ann")]),
            ("[1,2,3]", [PersonalData(subject: "ann")]),
            ("{\"a\":1,\"b\":{\"c\":[true,null]},\"d\":\"é \\\"x\\\" \\u2028\"}", [PersonalData(subject: "ann", fields: ["d", "b"])]),
            ("{\"user\":\"ann\",\"text\":\"hi\",\"to\":\"bob\"}", [PersonalData(subject: "ann", fields: ["text"]), PersonalData(subject: "bob", fields: ["to", "user"])]),
            ("{\"user\":\"ann\",\"text\":\"hi\"}", [PersonalData(subject: "ann", fields: ["text"], isForgotten: true)]),
            ("{\"user\":\"ann\",\"text\":\"hi\"}", [PersonalData(subject: "ann", fields: ["text"], isForgotten: true), PersonalData(subject: "bob", fields: ["user"])]),
            ("{\"text\":\"hi\"}", [PersonalData(subject: "ann", fields: [])]),
        ]
        for (json, parts) in cases {
            // When they are opened both ways, then they answer alike, in place
            Self.expectAlike(try Self.sealed(json, parts), inPlace: true, "\(json) sealed for \(parts)")
        }
        // And keys beyond ASCII are left to the general path, which compares them as strings
        Self.expectAlike(
            try Self.sealed("{\"ключ\":\"значение\",\"n\":0}", [PersonalData(subject: "ann", fields: ["ключ"])]), inPlace: false, "a field in Cyrillic")
        // And data that is no envelope comes back as it is, from the general path
        Self.expectAlike(Data("{\"user\":\"ann\"}".utf8), inPlace: false, "plain data")
        Self.expectAlike(Data("{\"$personal\":1}".utf8), inPlace: false, "no parts")
    }

    @Test("odd envelopes open alike: keys escaped or twice, members beside, parts unread, plaintexts that are no object")
    func odd() throws {
        let text = try Self.part("ann", fields: "[\"text\"]", key: Self.ann, plaintext: "{\"text\":\"hi\"}")
        let user = try Self.part("bob", fields: "[\"user\"]", key: Self.bob, plaintext: "{\"user\":\"bob\"}")
        // (a part with a member nested `depth` arrays deep: the part lies two deep in the envelope)
        func nested(_ depth: Int) -> String { String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }
        func deepPart(_ depth: Int) -> String { text.replacingOccurrences(of: "{\"subject\":", with: "{\"deep\":\(nested(depth)),\"subject\":") }
        // Given envelopes the store does not write but a reader must open as it always did
        let inPlace: [(String, String)] = [
            ("{\"$personal\":[\(text)],\"data\":{\"user\":\"ann\",\"text\":0}}", "a part sealed by hand"),
            ("{\"$personal\":[\(text)],\"data\":{ \"user\" : \"ann\" , \"text\" : 0 }}", "white space in the payload"),
            ("{\"$personal\":[ \(text) , \(user) ],\"data\":{\"user\":0,\"text\":0}}", "white space between parts"),
            ("{\"$personal\":[\(text)],\"data\":{\"user\":\"ann\"}}", "a sealed field the payload lacks"),
            ("{\"$personal\": [\(text)] , \"data\" : {\"text\":0} }", "white space around the envelope's members"),
            ("{\"$personal\":[\(text.replacingOccurrences(of: "{\"subject\":", with: "{ \"subject\" : "))],\"data\":{\"text\":0}}", "white space in a part"),
            ("{\"$personal\":[\(try Self.part("ann", fields: "[\"K\"]", key: Self.ann, plaintext: "{\"\u{212A}\":\"kelvin\"}"))],\"data\":{\"K\":0}}", "a plaintext's key that is K as a string (the Kelvin sign)"),
            ("{\"$personal\":[\(try Self.part("ann", fields: "[\"text\"]", key: Self.ann, plaintext: "{\"te\\u0078t\":\"escaped\"}"))],\"data\":{\"text\":0}}", "a plaintext's key escaped"),
            ("{\"$personal\":[\(try Self.part("ann", fields: "[\"\"]", key: Self.ann, plaintext: "{\"\":\"empty\"}"))],\"data\":{\"\":0,\"text\":1}}", "a field with an empty name"),
            ("{\"$personal\":[\(try Self.part("ann", fields: "null", key: Self.ann, plaintext: "{\"text\":1}")),\(user)],\"data\":{\"user\":0,\"text\":0}}", "a whole-payload part among several"),
            ("{\"$personal\":[\(try Self.part("ann", fields: "[\"text\",\"text\"]", key: Self.ann, plaintext: "{\"text\":\"twice\"}"))],\"data\":{\"text\":0}}", "a field named twice in a part"),
            ("{\"$personal\":[\(text),\(try Self.part("bob", fields: "[\"text\"]", key: Self.bob, plaintext: "{\"text\":\"bob's\"}"))],\"data\":{\"text\":0}}", "a field two parts name: the last gives it"),
            ("{\"$personal\":[\(try Self.part("ann", fields: "[\"text\"]", key: Self.ann, plaintext: "{\"text\":1,\"text\":2}"))],\"data\":{\"text\":0}}", "a plaintext with a key twice"),
            ("{\"$personal\":[\(try Self.part("ann", fields: "[\"text\"]", key: Self.ann, plaintext: "not json"))],\"data\":{\"text\":0}}", "a plaintext that is no JSON"),
            ("{\"$personal\":[\(try Self.part("ann", fields: "[\"text\"]", key: Self.ann, plaintext: "{\"other\":1}"))],\"data\":{\"text\":0}}", "a plaintext without the field"),
            ("{\"$personal\":[\(try Self.part("ann", fields: "[\"text\",7]", key: Self.ann, plaintext: "{\"text\":1}"))],\"data\":{\"text\":0}}", "fields with a number among them"),
            ("{\"$personal\":[\(text.replacingOccurrences(of: "\"sealed\":\"", with: "\"sealed\":\"AAAA"))],\"data\":{\"text\":0}}", "sealed bytes tampered with"),
            ("{\"$personal\":[\(deepPart(JSONScanner.maximumDepth - 2))],\"data\":{\"text\":0}}", "a part's member nested as deep as JSON may be"),
            ("{\"$personal\":[\(text)],\"data\":{\"text\":0,\"deep\":\(nested(JSONScanner.maximumDepth - 1))}}", "a payload nested as deep as JSON may be"),
        ]
        for (stored, comment) in inPlace { Self.expectAlike(Data(stored.utf8), inPlace: true, comment) }
        // And those whose keys or members the path in place leaves to the general one
        let general: [(String, String)] = [
            ("{\"$personal\":[\(text)],\"data\":{\"user\":\"ann\",\"te\\u0078t\":0}}", "an escaped key in the payload"),
            ("{\"$personal\":[\(text)],\"data\":{\"a\\u2028\":1,\"text\":0}}", "a key with U+2028, escaped"),
            ("{\"$personal\":[\(text)],\"data\":{\"a\u{2028}\":1,\"text\":0}}", "a key with U+2028 as it is"),
            ("{\"$personal\":[\(text)],\"data\":{\"text\":0,\"é\":1}}", "a key in UTF-8"),
            ("{\"$personal\":[\(text)],\"data\":{\"text\":0,\"a\u{7F}\":1}}", "a key with DEL"),
            ("{\"$personal\":[\(try Self.part("ann", fields: "[\"\u{212A}\"]", key: Self.ann, plaintext: "{\"K\":\"kelvin\"}"))],\"data\":{\"K\":0}}", "a field named by the Kelvin sign, which is K as a string"),
            ("{\"$personal\":[\(text)],\"data\":{\"K\":0,\"\u{212A}\":1,\"text\":0}}", "a payload's key twice as strings"),
            ("{\"$personal\":[\(text)],\"data\":{\"text\":0,\"text\":1}}", "a payload's key twice"),
            ("{\"$personal\":[\(text)],\"data\":[1]}", "a payload that is no object"),
            ("{\"$personal\":[\(text)]}", "fields sealed without a payload"),
            ("{\"$personal\":[\(text)],\"data\":{\"text\":0},\"more\":1}", "a member beside"),
            ("{\"$personal\":[\(text)],\"more\":1,\"data\":{\"text\":0}}", "a member between"),
            ("{\"$personal\":[\(text)],\"d\\u0061ta\":{\"text\":0}}", "an escaped data key"),
            ("{\"$personal\":[],\"data\":{\"text\":0}}", "no parts"),
            ("{\"$personal\":[{\"fields\":[\"text\"]}],\"data\":{\"text\":0}}", "a part without a subject"),
            ("{\"$personal\":[\(text),7],\"data\":{\"text\":0}}", "a part that is no object"),
            ("{\"$personal\":[\(text)],\"data\":{\"text\":0}", "an envelope cut short"),
            ("{\"$personal\":[\(try Self.part("ann", fields: "[\"te\\\"xt\"]", key: Self.ann, plaintext: "{\"te\\\"xt\":1}"))],\"data\":{\"te\\\"xt\":0}}", "a field whose name has a quote"),
            ("{\"$personal\":[\(deepPart(JSONScanner.maximumDepth - 1))],\"data\":{\"text\":0}}", "a part's member nested deeper than JSON may be"),
            ("{\"$personal\":[\(text)],\"data\":{\"text\":0,\"deep\":\(nested(JSONScanner.maximumDepth))}}", "a payload nested deeper than JSON may be"),
            ("{\"$personal\":[\(text),\(nested(JSONScanner.maximumDepth))],\"data\":{\"text\":0}}", "a part that is no object, nested deeper than JSON may be"),
        ]
        for (stored, comment) in general { Self.expectAlike(Data(stored.utf8), inPlace: false, comment) }

    }
}
