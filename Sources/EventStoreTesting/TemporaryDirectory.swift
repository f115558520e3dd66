import Foundation

/// A fresh directory under the system's temporary directory, removed with everything in it when
/// the value is released. Every test makes its own, so tests run in any order and in parallel.
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
        try? FileManager.default.removeItem(atPath: path)
    }

    /// A path inside the directory (not created).
    public func appending(_ name: String) -> String {
        path + "/" + name
    }
}
