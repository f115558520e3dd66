/// Big-endian integer helpers for keys and values: byte order that sorts like the numbers.
@_spi(Records) public enum BigEndian {
    @inline(__always)
    @inlinable
    public static func store(_ value: UInt64, into pointer: UnsafeMutableRawPointer, at offset: Int = 0) {
        pointer.storeBytes(of: value.bigEndian, toByteOffset: offset, as: UInt64.self)
    }

    @inline(__always)
    @inlinable
    public static func store(_ value: UInt32, into pointer: UnsafeMutableRawPointer, at offset: Int = 0) {
        pointer.storeBytes(of: value.bigEndian, toByteOffset: offset, as: UInt32.self)
    }

    @inline(__always)
    @inlinable
    public static func store(_ value: UInt16, into pointer: UnsafeMutableRawPointer, at offset: Int = 0) {
        pointer.storeBytes(of: value.bigEndian, toByteOffset: offset, as: UInt16.self)
    }

    /// The 8 big-endian bytes of `value`, as a table value.
    @inlinable
    public static func bytes(of value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }

    @inline(__always)
    @inlinable
    public static func uint64(_ buffer: UnsafeRawBufferPointer, at offset: Int = 0) -> UInt64 {
        UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    @inline(__always)
    @inlinable
    public static func uint32(_ buffer: UnsafeRawBufferPointer, at offset: Int = 0) -> UInt32 {
        UInt32(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @inline(__always)
    @inlinable
    public static func uint16(_ buffer: UnsafeRawBufferPointer, at offset: Int = 0) -> UInt16 {
        UInt16(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    /// Runs `body` with the 8 big-endian bytes of `value`.
    @inline(__always)
    @inlinable
    public static func withBytes<R>(of value: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: value.bigEndian, body)
    }

    /// Runs `body` with the 16 bytes of a stream-index key: stream number, then the first version
    /// of a chunk.
    @inline(__always)
    @inlinable
    public static func withIndexKey<R>(
        stream number: UInt64, version: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R
    ) rethrows -> R {
        try withUnsafeBytes(of: (number.bigEndian, version.bigEndian), body)
    }
}
