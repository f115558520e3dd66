/// The metadata keys the store logs with, in one place so they stay the same everywhere.
package enum StoreLogKeys {
    package static let path = "eventstore.path"
    package static let mapSize = "eventstore.map_size"
    package static let jobs = "eventstore.jobs"
    package static let readers = "eventstore.readers"
    package static let reason = "eventstore.reason"
    package static let seconds = "eventstore.seconds"
    /// Of a slow commit: the seconds its jobs ran, before LMDB's commit.
    package static let runningSeconds = "eventstore.running_seconds"
    package static let events = "eventstore.events"
    package static let position = "eventstore.position"
    package static let head = "eventstore.head"
}
