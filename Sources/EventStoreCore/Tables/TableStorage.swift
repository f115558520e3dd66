/// What a backend does for a ``TableTransaction``: the table and log operations of one of its
/// transactions. ``TableTransaction`` checks validity, writability and keys before calling.
package protocol TableStorage: AnyObject {
    func withValue<R>(_ table: String, _ key: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R?
    func put(_ table: String, _ key: [UInt8], _ value: [UInt8]) throws
    func delete(_ table: String, _ key: [UInt8]) throws -> Bool
    func removeAll(_ table: String) throws
    func count(_ table: String) throws -> Int
    func scan(
        _ table: String, prefix: [UInt8], after: [UInt8]?, reverse: Bool,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws
    func releaseReadPages()
    func headPosition() throws -> UInt64
    /// How many deletions (with `trimsOnly`, trims by retention) removed events of `type` (nil:
    /// any); 0 on a backend without deletions.
    func deletionCount(ofType type: String?, trimsOnly: Bool) throws -> UInt64
    /// The version of the stream's last event, deleted or not; 0 for a stream never written.
    func streamVersion(_ stream: String) throws -> UInt64
    func forEachEvent(inStream stream: String, from version: UInt64, _ body: (RecordedEvent) throws -> Void) throws
    func forEachEvent(from start: UInt64, through last: UInt64, types: Set<String>?, _ body: (RecordedEvent) throws -> Bool) throws
        -> UInt64
}
