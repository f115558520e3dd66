/// Remembers the strings it has made from bytes, so decoding many records of the same streams
/// and types shares one string each instead of allocating one per record.
///
/// A direct-mapped cache: a slot per hash, no eviction policy but replacement. Used by one
/// thread at a time (it is a value kept by one bulk read).
@_spi(Records) public struct StringInterner {
    @usableFromInline var slots: [(hash: UInt64, string: String)?]
    @usableFromInline let mask: Int

    /// A cache of `capacity` slots (rounded up to a power of two).
    @inlinable
    public init(capacity: Int = 1024) {
        var size = 1
        while size < capacity { size <<= 1 }
        slots = Array(repeating: nil, count: size)
        mask = size - 1
    }

    /// The string of `bytes`, which must be valid UTF-8 (callers check first).
    @inlinable
    public mutating func string(_ bytes: UnsafeRawBufferPointer) -> String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        let slot = Int(truncatingIfNeeded: hash) & mask
        if let cached = slots[slot], cached.hash == hash {
            var candidate = cached.string
            let same = candidate.withUTF8 { cachedBytes in
                guard cachedBytes.count == bytes.count else { return false }
                guard let left = cachedBytes.baseAddress, let right = bytes.baseAddress else { return true }
                return memcmp(left, right, bytes.count) == 0
            }
            if same { return cached.string }
        }
        let string = String(decoding: bytes, as: UTF8.self)
        slots[slot] = (hash, string)
        return string
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
