import Projections
import ServiceLifecycle

/// The projection daemon (``ProjectionRunner/followLive(processors:)``) as a service of the
/// server's group: first in the group, so it stops last, after the HTTP server has drained (a
/// request in flight may still wait for a projection to catch up). Its end is not the group's:
/// on a read-only store it returns at once, and the server goes on answering queries.
struct LiveProjectionsService: Service {
    let runner: ProjectionRunner

    func run() async throws {
        await cancelWhenGracefulShutdown { [runner] in await runner.followLive() }
    }
}
