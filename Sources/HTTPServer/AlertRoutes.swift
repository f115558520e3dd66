import Apps
import Hummingbird

extension Server {
    /// The alert center (`esctl alerts`): `POST /apps/alerts/post {"user"?, "text", "severity"?}`
    /// (good or bad, default good; a text already queued records nothing: 200 `[]`) and
    /// `POST /apps/alerts/clear {"user"?, "alert"}` or `{"user"?, "all": true}`.
    func addAlertRoutes(to router: Router<ServerContext>) {
        addAppCommand(router, "/apps/alerts/post", fields: ["user", "text", "severity"]) { body in
            let text = try body.string("text")
            let severityText = try body.string("severity", default: Severity.good.rawValue)
            guard let severity = Severity(rawValue: severityText) else {
                throw ServerError(.badRequest, "The severity must be \"good\" or \"bad\".")
            }
            let outcome = try await self.backend.alerts(.post(text: text, severity: severity), user: try body.string("user", default: AppStreams.defaultKey))
            self.warnPassedOver(outcome.passedOver)
            return .events(outcome.recorded)
        }
        addAppCommand(router, "/apps/alerts/clear", fields: ["user", "alert", "all"]) { body in
            let alert = try body.optionalString("alert")
            let all = try body.bool("all", default: false)
            guard (alert == nil) == all else {
                throw ServerError(.badRequest, "Name one alert (its name or text) in 'alert', or give \"all\": true.")
            }
            let command: AlertCommand = all ? .clearAll : .clear(alert ?? "")
            let outcome = try await self.backend.alerts(command, user: try body.string("user", default: AppStreams.defaultKey))
            self.warnPassedOver(outcome.passedOver)
            return .events(outcome.recorded)
        }
    }
}
