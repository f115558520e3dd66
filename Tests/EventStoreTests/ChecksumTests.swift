import CRC32C
import Testing

/// The records' checksum: CRC-32C (docs/FORMAT.md), computed by the processor's instruction
/// where there is one and by a table elsewhere.
@Suite("CRC-32C")
struct ChecksumTests {
    @Test("the standard check value, by the table, the processor and a bit-by-bit reference")
    func checkValue() {
        let text = Array("123456789".utf8)
        #expect(es_crc32c_extend(0, text, text.count) == 0xE306_9283)
        #expect(es_crc32c_extend_portable(0, text, text.count) == 0xE306_9283)
        #expect(crc32c(text) == 0xE306_9283)
    }

    @Test("every length and alignment gives the reference's value, and extending in two parts gives the whole's")
    func lengthsAndAlignments() {
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        let bytes = (0..<300).map { _ -> UInt8 in
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: seed >> 33)
        }
        bytes.withUnsafeBytes { raw in
            for start in 0..<8 {
                for length in [0, 1, 3, 7, 8, 9, 15, 16, 17, 63, 64, 65, 200, 292 - start] where start + length <= raw.count {
                    let part = UnsafeRawBufferPointer(rebasing: raw[start..<(start + length)])
                    let expected = crc32c(Array(part))
                    #expect(es_crc32c_extend(0, part.baseAddress, length) == expected, "start \(start), length \(length)")
                    #expect(es_crc32c_extend_portable(0, part.baseAddress, length) == expected, "start \(start), length \(length)")
                    let split = length / 3
                    let first = es_crc32c_extend(0, part.baseAddress, split)
                    #expect(es_crc32c_extend(first, part.baseAddress.map { $0 + split }, length - split) == expected)
                }
            }
        }
    }
}
