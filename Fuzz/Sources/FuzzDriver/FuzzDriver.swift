import Foundation

/// libFuzzer's driver, called from a Swift `main` (SwiftPM gives executables their own `main`,
/// so libFuzzer's is not the one that runs). Links only in builds with -sanitize=fuzzer.
@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

public enum FuzzDriver {
    nonisolated(unsafe) private static var check: ((UnsafeRawBufferPointer) throws -> Void)?

    /// Runs libFuzzer with the process's arguments over `check`, which throws on a broken
    /// promise; returns libFuzzer's exit status.
    public static func run(_ check: @escaping (UnsafeRawBufferPointer) throws -> Void) -> Int32 {
        // Set once before libFuzzer starts; it calls back on this thread only.
        Self.check = check
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        return LLVMFuzzerRunDriver(&argc, &argv) { data, size in
            do {
                try FuzzDriver.check?(UnsafeRawBufferPointer(start: data, count: size))
            } catch {
                fatalError("\(error)")
            }
            return 0
        }
    }
}
