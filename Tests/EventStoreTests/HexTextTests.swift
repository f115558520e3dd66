@testable import EventStoreCore
import Testing

@Suite("Hex text")
struct HexTextTests {
    @Test("bytes as lower-case hex, two digits a byte, as String(format: \"%02x\") wrote them")
    func lowercase() {
        let bytes: [UInt8] = [0x00, 0x0f, 0x10, 0xa5, 0xff]
        #expect(HexText.lowercase(bytes) == "000f10a5ff")
        #expect(HexText.lowercase(bytes) == bytes.map { String(format: "%02x", $0) }.joined())
        #expect(HexText.lowercase([UInt8]()) == "")
        let key = SubjectKey(id: Array(0..<16), material: Array(repeating: 7, count: 32))
        #expect(key.idText == "000102030405060708090a0b0c0d0e0f")
    }
}
