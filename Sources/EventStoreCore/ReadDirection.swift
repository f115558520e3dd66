/// Which way to read a stream.
public enum ReadDirection: String, Sendable, CaseIterable {
    /// From older to newer versions.
    case forward
    /// From newer to older versions.
    case backward
}
