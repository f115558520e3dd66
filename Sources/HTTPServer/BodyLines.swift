import Hummingbird
import NIOCore

/// The lines of a request body that streams (NDJSON), read as they arrive, each bounded: a line
/// longer than `limit` bytes (not counting its `\r\n` or `\n`) is dropped as it passes (its
/// bytes never held) and reported as ``Line/tooLong``, and the lines after it are read as before.
struct BodyLines {
    /// One line of the body, without its `\n` (nor a `\r` before it).
    enum Line: Equatable {
        case text([UInt8])
        case tooLong
    }

    private var chunks: RequestBody.AsyncIterator
    private let limit: Int
    /// The current line's bytes so far.
    private var partial: [UInt8] = []
    /// The current line passed the limit: its bytes are dropped until its end.
    private var skipping = false
    /// What is left of the chunk being read.
    private var pending: ByteBuffer?
    private var ended = false

    init(_ body: RequestBody, limit: Int) {
        chunks = body.makeAsyncIterator()
        self.limit = limit
    }

    /// The next line, nil at the body's end. Throws what reading the body throws (the client
    /// left, or the connection is being closed).
    mutating func next() async throws -> Line? {
        while !ended {
            guard var chunk = pending else {
                if let next = try await chunks.next() {
                    pending = next
                    continue
                }
                ended = true
                // A last line without its newline is a line all the same.
                if skipping || !partial.isEmpty { return finishLine() }
                return nil
            }
            let view = chunk.readableBytesView
            guard let newline = view.firstIndex(of: UInt8(ascii: "\n")) else {
                take(view[...])
                pending = nil
                continue
            }
            take(view[view.startIndex..<newline])
            chunk.moveReaderIndex(forwardBy: newline - view.startIndex + 1)
            pending = chunk.readableBytes > 0 ? chunk : nil
            return finishLine()
        }
        return nil
    }

    private mutating func take(_ bytes: ByteBufferView.SubSequence) {
        guard !skipping else { return }
        // One byte more than the limit may be a `\r` before the newline.
        if partial.count + bytes.count > limit + 1 {
            skipping = true
            partial = []
        } else {
            partial.append(contentsOf: bytes)
        }
    }

    private mutating func finishLine() -> Line {
        defer {
            partial = []
            skipping = false
        }
        if skipping { return .tooLong }
        if partial.last == UInt8(ascii: "\r") { partial.removeLast() }
        return partial.count > limit ? .tooLong : .text(partial)
    }
}
