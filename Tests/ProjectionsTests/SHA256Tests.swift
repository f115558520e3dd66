import Projections
import Testing

@Suite("SHA-256")
struct SHA256Tests {
    @Test("the FIPS 180-4 test vectors", arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
    ])
    func vectors(_ message: String, _ digest: String) {
        #expect(SHA256.hex(Array(message.utf8)) == digest)
    }

    @Test("a million a's, fed in uneven pieces")
    func millionAs() {
        var hasher = SHA256()
        var remaining = 1_000_000
        var piece = 1
        while remaining > 0 {
            let count = min(piece, remaining)
            hasher.update(repeatElement(UInt8(ascii: "a"), count: count))
            remaining -= count
            piece = piece * 3 % 997 + 1
        }
        #expect(SHA256.hexString(hasher.finalize()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("messages around the block boundary hash like one-piece messages", arguments: [55, 56, 57, 63, 64, 65, 119, 120])
    func boundaries(_ length: Int) {
        let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var split = SHA256()
        split.update(message.prefix(length / 2))
        split.update(message.dropFirst(length / 2))
        #expect(SHA256.hexString(split.finalize()) == SHA256.hex(message))
    }
}
