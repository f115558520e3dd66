import Apps
import Hummingbird

extension Server {
    /// The step counter (`esctl fitness`): `POST /apps/fitness/goal {"user"?, "steps"}`, `start`,
    /// `pause`, `restart` (`{"user"?}`), `walk {"user"?, "steps", "distance"?}` and
    /// `nessie {"user"?, "meters"}`. Answers the events recorded (workout and alerts).
    func addFitnessRoutes(to router: Router<ServerContext>) {
        let user: Set<String> = ["user"]
        addFitness(router, "goal", fields: user.union(["steps"])) { body in .setGoal(try body.int("steps")) }
        addFitness(router, "start", fields: user) { _ in .start }
        addFitness(router, "pause", fields: user) { _ in .pause }
        addFitness(router, "restart", fields: user) { _ in .restart }
        addFitness(router, "walk", fields: user.union(["steps", "distance"])) { body in
            .walk(steps: try body.int("steps"), distance: try body.double("distance", default: 0))
        }
        addFitness(router, "nessie", fields: user.union(["meters"])) { body in .moveNessie(try body.double("meters")) }
    }

    private func addFitness(
        _ router: Router<ServerContext>, _ name: String, fields: Set<String>,
        _ command: @escaping @Sendable (AppRequestBody) throws -> FitnessCommand
    ) {
        addAppCommand(router, "/apps/fitness/\(name)", fields: fields) { body in
            let command = try command(body)
            let outcome = try await self.backend.fitness(command, user: try body.string("user", default: AppStreams.defaultKey))
            self.warnPassedOver(outcome.passedOver)
            return .events(outcome.recorded)
        }
    }
}
