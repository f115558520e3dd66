/// A projection's entry in the runner's `projections` table: which version built the stored
/// state, the last position applied, and whether a (re)build is still under way.
struct Checkpoint: RowValue, Equatable {
    var version: Int64
    /// The last position applied; 0 before the first event.
    var position: UInt64
    /// True from the start of a (re)build until the state first reaches the head.
    var isBuilding: Bool

    /// The runner's own table, holding one checkpoint per projection name.
    static let table = "projections"

    static func key(_ projection: String) -> [UInt8] { RowKey(projection).bytes }

    init(version: Int64, position: UInt64, isBuilding: Bool) {
        self.version = version
        self.position = position
        self.isBuilding = isBuilding
    }

    func encode(to writer: inout RowWriter) {
        writer.write(version)
        writer.write(position)
        writer.write(isBuilding)
    }

    init(from reader: inout RowReader) throws(RowDecodingError) {
        version = try reader.read(Int64.self)
        position = try reader.read(UInt64.self)
        isBuilding = try reader.read(Bool.self)
    }
}
