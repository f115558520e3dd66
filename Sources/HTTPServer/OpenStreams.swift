/// How many live streams (`/subscribe`, the apps' live routes) a server has open: a handler counts
/// itself in when its body starts and out when it has ended, however it ended (the limit, the
/// client leaving, a graceful stop, the store closing). Lets a program (or a test) see that a
/// vanished client's handler really ended.
public final class OpenStreams: Sendable {
    private let open = WatchedValue(0)

    public init() {}

    /// The number of streams open now.
    public var count: Int { open.value }

    /// Waits until the number of open streams satisfies `condition` (at once when it does now).
    /// Returns early, without the condition holding, when the task is cancelled: bound it with a
    /// timeout and check ``count`` after.
    public func wait(until condition: @escaping @Sendable (Int) -> Bool) async {
        await open.wait(until: condition)
    }

    /// Counts a stream in.
    func opened() { open.update { $0 += 1 } }

    /// Counts a stream out.
    func closed() { open.update { $0 -= 1 } }
}
