import EventStoreCore

/// SHA-256 (FIPS 180-4), written out so the state hash needs no cryptography library.
/// Feed bytes with ``update(_:)`` in any pieces, then read ``finalize()`` once.
package struct SHA256: Sendable {
    private static let roundConstants: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    private var hash: [UInt32] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    ]
    private var block: [UInt8] = []
    /// Bytes already compressed.
    private var counted: UInt64 = 0

    package init() {
        block.reserveCapacity(64)
    }

    /// Adds bytes to the message.
    package mutating func update(_ bytes: some Sequence<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in update(buffer) }
        if done != nil { return }
        for byte in bytes {
            block.append(byte)
            if block.count == 64 {
                compress(block)
                block.removeAll(keepingCapacity: true)
            }
        }
    }

    /// Adds raw bytes to the message.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        update(bytes.assumingMemoryBound(to: UInt8.self))
    }

    private mutating func update(_ buffer: UnsafeBufferPointer<UInt8>) {
        var index = 0
        if !block.isEmpty {
            let take = min(64 - block.count, buffer.count)
            block.append(contentsOf: buffer[0..<take])
            index = take
            guard block.count == 64 else { return }
            compress(block)
            block.removeAll(keepingCapacity: true)
        }
        while buffer.count - index >= 64 {
            compress(UnsafeBufferPointer(rebasing: buffer[index..<(index + 64)]))
            index += 64
        }
        block.append(contentsOf: buffer[index...])
    }

    /// The 32-byte digest of everything added.
    package mutating func finalize() -> [UInt8] {
        let bitLength = messageBits
        block.append(0x80)
        if block.count > 56 {
            block.append(contentsOf: repeatElement(0, count: 64 - block.count))
            compress(block)
            block.removeAll(keepingCapacity: true)
        }
        block.append(contentsOf: repeatElement(0, count: 56 - block.count))
        withUnsafeBytes(of: bitLength.bigEndian) { block.append(contentsOf: $0) }
        compress(block)
        block.removeAll()
        return hash.flatMap { word in withUnsafeBytes(of: word.bigEndian) { Array($0) } }
    }

    /// The digest of `bytes` as lowercase hexadecimal.
    package static func hex(_ bytes: some Sequence<UInt8>) -> String {
        var hasher = SHA256()
        hasher.update(bytes)
        return hexString(hasher.finalize())
    }

    /// Bytes as lowercase hexadecimal.
    package static func hexString(_ digest: [UInt8]) -> String { HexText.lowercase(digest) }

    private var messageBits: UInt64 { (counted &+ UInt64(block.count)) &* 8 }

    private mutating func compress(_ chunk: some RandomAccessCollection<UInt8>) {
        counted += 64
        // The message schedule lives on the stack: no allocation per block.
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            var byteIndex = chunk.startIndex
            for i in 0..<16 {
                var word: UInt32 = 0
                for _ in 0..<4 {
                    word = word << 8 | UInt32(chunk[byteIndex])
                    byteIndex = chunk.index(after: byteIndex)
                }
                w[i] = word
            }
            for i in 16..<64 {
                let s0 = rotate(w[i - 15], 7) ^ rotate(w[i - 15], 18) ^ (w[i - 15] >> 3)
                let s1 = rotate(w[i - 2], 17) ^ rotate(w[i - 2], 19) ^ (w[i - 2] >> 10)
                w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
            }
            var (a, b, c, d, e, f, g, h) = (hash[0], hash[1], hash[2], hash[3], hash[4], hash[5], hash[6], hash[7])
            for i in 0..<64 {
                let s1 = rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25)
                let choice = (e & f) ^ (~e & g)
                let t1 = h &+ s1 &+ choice &+ Self.roundConstants[i] &+ w[i]
                let s0 = rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22)
                let majority = (a & b) ^ (a & c) ^ (b & c)
                let t2 = s0 &+ majority
                (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
            }
            hash[0] &+= a
            hash[1] &+= b
            hash[2] &+= c
            hash[3] &+= d
            hash[4] &+= e
            hash[5] &+= f
            hash[6] &+= g
            hash[7] &+= h
        }
    }

    @inline(__always)
    private func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 {
        (value >> count) | (value << (32 - count))
    }
}
