#if canImport(Glibc)
import Glibc
#endif

/// How a long-running esctl gives memory back to the system.
enum MemoryReturn {
    /// Buffers of 256 KiB and more (large events on their way to clients) are mapped on their
    /// own and unmapped when freed. glibc's default raises this threshold after each such free,
    /// after which large buffers come from its heap, whose freed space it keeps: a server that
    /// sent large events to many clients at once stayed at its peak size after they left.
    /// Does nothing where the C library has no `mallopt`.
    static func mapLargeBuffers() {
        #if canImport(Glibc)
        // mallopt is declared in <malloc.h>, which the Glibc module does not import.
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
        let mmapThreshold: Int32 = -3  // M_MMAP_THRESHOLD
        _ = mallopt(mmapThreshold, 256 << 10)
        #endif
    }
}
