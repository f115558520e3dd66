import Apps
import Hummingbird

extension Server {
    /// The color calculator (`esctl color`): `POST /apps/color/press {"calculator"?, "key"}` and
    /// `POST /apps/color/set {"calculator"?, "hex"}`, each answering 201 with the display after
    /// it, the object `esctl color --json` prints:
    /// `{"calculator","hexText","rgboText","name","color":{"red","green","blue","opacity"},"derived"}`.
    func addColorRoutes(to router: Router<ServerContext>) {
        addColor(router, "press", fields: ["calculator", "key"]) { body in .press(try body.string("key")) }
        addColor(router, "set", fields: ["calculator", "hex"]) { body in .set(try body.string("hex")) }
    }

    private func addColor(
        _ router: Router<ServerContext>, _ name: String, fields: Set<String>,
        _ command: @escaping @Sendable (AppRequestBody) throws -> ColorCommand
    ) {
        addAppCommand(router, "/apps/color/\(name)", fields: fields) { body in
            let command = try command(body)
            let calculator = try body.string("calculator", default: AppStreams.defaultKey)
            let outcome = try await self.backend.color(command, calculator: calculator)
            self.warnPassedOver(outcome.passedOver)
            return .state(outcome.state.json(calculator: calculator), recorded: !outcome.recorded.isEmpty)
        }
    }
}
