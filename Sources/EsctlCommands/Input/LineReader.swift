import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Reads a file or standard input line by line, in chunks, so a large NDJSON file never sits in
/// memory whole. Lines are split on `\n`; a trailing `\r` is dropped.
final class LineReader {
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false
    /// Where each read lands before it joins `buffer`.
    private let chunk = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 1 << 20)
    /// The number of the line last returned (from 1).
    private(set) var lineNumber = 0
    /// Whether the byte-order mark check is still to come.
    private var atStartOfInput = true

    /// Opens `path`, or standard input for `-`. Throws ``CLIError`` when the file cannot be read.
    init(path: String) throws {
        if path == "-" {
            descriptor = STDIN_FILENO
            ownsDescriptor = false
        } else {
            descriptor = open(path, O_RDONLY)
            guard descriptor >= 0 else {
                throw CLIError(.invalidInput, "Cannot read '\(path)' (\(String(cString: strerror(errno)))); check the path.")
            }
            ownsDescriptor = true
        }
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
        chunk.deallocate()
    }

    /// The next line without its line break, or nil at the end of the input.
    func nextLine() throws -> ArraySlice<UInt8>? {
        while true {
            if lineNumber == 0 && atStartOfInput {
                // A UTF-8 byte-order mark (some editors on some systems write one) is no part of the first line.
                if buffer.count - start >= 3 || atEnd {
                    if buffer[start...].starts(with: [0xEF, 0xBB, 0xBF]) { start += 3 }
                    atStartOfInput = false
                } else {
                    try fill()
                    continue
                }
            }
            if let newline = buffer[start...].firstIndex(of: 0x0A) {
                var line = buffer[start..<newline]
                start = newline + 1
                if line.last == 0x0D { line = line.dropLast() }
                lineNumber += 1
                return line
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                var line = buffer[start...]
                start = buffer.count
                if line.last == 0x0D { line = line.dropLast() }
                lineNumber += 1
                return line
            }
            try fill()
        }
    }

    private func fill() throws {
        if start > 0 {
            buffer.removeFirst(start)
            start = 0
        }
        var count = 0
        repeat {
            count = read(descriptor, chunk.baseAddress, chunk.count)
        } while count < 0 && errno == EINTR
        guard count >= 0 else {
            throw CLIError(.invalidInput, "Reading the input failed (\(String(cString: strerror(errno)))).")
        }
        buffer.append(contentsOf: UnsafeBufferPointer(rebasing: chunk[0..<count]))
        if count == 0 { atEnd = true }
    }
}
