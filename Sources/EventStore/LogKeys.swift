/// The metadata keys the store logs with, in one place so they stay the same everywhere.
enum LogKeys {
    static let path = "eventstore.path"
    static let mapSize = "eventstore.map_size"
    static let jobs = "eventstore.jobs"
    static let readers = "eventstore.readers"
    static let reason = "eventstore.reason"
    static let seconds = "eventstore.seconds"
    static let events = "eventstore.events"
    static let position = "eventstore.position"
    static let head = "eventstore.head"
}
