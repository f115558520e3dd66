import Foundation

/// The rules deletion and retention share on every backend.
package enum StreamMaintenance {
    /// Refuses a stream name that breaks the naming rules or is reserved: names that start
    /// with `$` belong to the store and its engines (`$deletions`, the records of deletions that
    /// `verify` needs; `$projections`, the decisions to pass events over).
    package static func validate(_ stream: String) throws(EventStoreError) {
        try Limits.validateName(stream, kind: "stream")
        if stream.utf8.first == UInt8(ascii: "$") {
            throw EventStoreError(
                .invalidInput,
                "The stream '\(stream)' is reserved (names that start with '$' belong to the store and its engines); it cannot be deleted or given a policy.")
        }
    }

    /// A soft delete of a stream whose events are all deleted already.
    package static func nothingToDelete(_ stream: String) -> EventStoreError {
        EventStoreError(.notFound, "The stream '\(stream)' has no events left; there is nothing to delete (--hard would still tombstone it).")
    }
}
