import Foundation

/// A fresh directory under the system's temporary directory, removed with everything in it soon
/// after the value is released (on a thread of its own). Every test makes its own, so tests run in any order and in parallel.
public final class TemporaryDirectory: Sendable {
    /// The directory's absolute path.
    public let path: String

    /// Creates the directory; the name starts with `prefix` to tell tests' leftovers apart.
    public init(prefix: String = "eventstore-test") throws {
        var template = Array("\(NSTemporaryDirectory())/\(prefix).XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else {
            throw CocoaError(.fileWriteUnknown)
        }
        path = String(cString: created)
    }

    deinit {
        // Removing a store's files can take a second or more on a busy disk, and a test's values
        // are often released on a thread of Swift's cooperative pool, which must not block that
        // long: the directory is removed on a thread of its own.
        let path = path
        Thread.detachNewThread { try? FileManager.default.removeItem(atPath: path) }
    }

    /// A path inside the directory (not created).
    public func appending(_ name: String) -> String {
        path + "/" + name
    }
}
