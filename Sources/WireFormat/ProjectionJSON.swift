import EventStoreCore
import Projections

/// Projections' statuses and rebuild reports as JSON objects: what `esctl projections --json`
/// and `esctl rebuild --json` print one per line, and what the server's `GET /projections` and
/// `POST /projections/{name}/rebuild` answer, byte for byte.
public enum ProjectionJSON {
    /// `{"name","version","checkpoint","lag","building","hash","eventsSkipped","skippedPositions","rebuild"}`:
    /// `skippedPositions` lists the first passed-over events (`position`, `reason`), `rebuild` is
    /// null or ``rebuild(_:)``.
    public static func status(_ status: ProjectionStatus) -> String {
        var object = JSONObjectWriter()
        object.add("name", status.name)
        object.add("version", status.version)
        object.add("checkpoint", status.checkpoint)
        object.add("lag", status.lag)
        object.add("building", status.isBuilding)
        object.add("hash", status.hash)
        object.add("eventsSkipped", status.eventsSkipped)
        object.add("skippedPositions", rawJSON: JSONValue.array(status.skippedPositions.map {
            ["position": .uint($0.position), "reason": .string($0.reason)]
        }).serialized)
        object.add("rebuild", rawJSON: rebuild(status.rebuild).serialized)
        return object.finish()
    }

    /// A rebuild under way beside the state that serves: `{"position","lag","eventsPerSecond"}`
    /// (`eventsPerSecond` null in its first second, or while it waits for its turn); null when none is.
    public static func rebuild(_ rebuild: RebuildStatus?) -> JSONValue {
        guard let rebuild else { return .null }
        return [
            "position": .uint(rebuild.position), "lag": .uint(rebuild.lag),
            "eventsPerSecond": rebuild.positionsPerSecond.map { .int(Int($0)) } ?? .null,
        ]
    }

    /// What a rebuild did to one projection: `{"name","eventsApplied","eventsSkipped","checkpoint","seconds","hash"}`,
    /// `seconds` to the millisecond.
    public static func report(_ report: RebuildReport) -> String {
        var object = JSONObjectWriter()
        object.add("name", report.projection)
        object.add("eventsApplied", report.eventsApplied)
        object.add("eventsSkipped", report.eventsSkipped)
        object.add("checkpoint", report.checkpoint)
        object.add("seconds", rawJSON: JSONWriter.number((report.seconds * 1000).rounded() / 1000))
        object.add("hash", report.hash)
        return object.finish()
    }
}
