/// The lines of NDJSON held in memory, split as esctl reads a file: on `\n`, a trailing `\r`
/// dropped, a UTF-8 byte-order mark before the first line skipped, a last line without a line
/// break kept. Numbered from 1, blank lines included (so numbers match an editor's).
public struct NDJSONLines: Sequence {
    private let bytes: [UInt8]

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    public func makeIterator() -> Iterator {
        Iterator(bytes: bytes)
    }

    public struct Iterator: IteratorProtocol {
        let bytes: [UInt8]
        var start: Int
        var number = 0

        init(bytes: [UInt8]) {
            self.bytes = bytes
            start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        }

        public mutating func next() -> (line: ArraySlice<UInt8>, number: Int)? {
            guard start < bytes.count else { return nil }
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            var line = bytes[start..<end]
            start = end + 1
            if line.last == 0x0D { line = line.dropLast() }
            number += 1
            return (line, number)
        }
    }
}
