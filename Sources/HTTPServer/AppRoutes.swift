import Apps
import Commands
import EventStore
import Hummingbird
import NIOCore
import WireFormat

extension Server {
    /// The apps' commands: `POST /apps/APP/COMMAND` with a JSON body, one route per domain command
    /// of esctl, with its rules and its `--json` answer (see the per-app files and
    /// docs/openapi.yaml).
    func addAppRoutes(to router: Router<ServerContext>) {
        addFitnessRoutes(to: router)
        addAlertRoutes(to: router)
        addChatAppRoutes(to: router)
        addCampRoutes(to: router)
        addColorRoutes(to: router)
    }

    /// Registers `POST path`: reads the body strictly (only `fields`), runs `command`, answers
    /// with what it returns. The apps' refusals become their JSON errors with the sentences esctl
    /// prints, pointing to the projection route that lists what exists instead of `esctl query`.
    func addAppCommand(
        _ router: Router<ServerContext>, _ path: String, fields: Set<String>,
        _ command: @escaping @Sendable (AppRequestBody) async throws -> AppAnswer
    ) {
        router.post(RouterPath(path)) { request, context -> Response in
            var request = request
            let buffer = try await request.collectBody(context)
            let body = try AppRequestBody(buffer, route: "POST \(path)", fields: fields)
            do {
                return try await command(body).response
            } catch let error as AppError {
                return AppAnswer.refusal(error)
            }
        }
    }

    /// Notes each event of a command's streams that was passed over (it does not decode), as
    /// esctl warns of them on standard error.
    func warnPassedOver(_ passedOver: [PassedOverEvent]) {
        for event in passedOver {
            logger.warning("passed over \(event.description) — it does not decode")
        }
    }
}

/// What an app route answers: the events a command recorded (esctl's `--json` lines, as one JSON
/// array: 201 when something was recorded, 200 when nothing was), or a state object (201 after
/// a command that recorded, as the color calculator's).
enum AppAnswer {
    case events([RecordedEvent])
    case state(JSONValue, recorded: Bool)

    var response: Response {
        switch self {
        case let .events(events):
            return ErrorResponses.body(events.isEmpty ? .ok : .created, AppAnswer.array(events))
        case let .state(value, recorded):
            return ErrorResponses.body(recorded ? .created : .ok, value.serialized)
        }
    }

    /// The events as a JSON array of `esctl replay --json` objects.
    static func array(_ events: [RecordedEvent]) -> String {
        "[" + events.map(EventJSON.line).joined(separator: ",") + "]"
    }

    /// An app's refusal as JSON. A reservation recorded as Invalid answers 422 like any refusal,
    /// and carries what was recorded (`recorded`, the events) with the original app's error
    /// `domain` and `domainCode`, as esctl prints the events and then exits 1.
    static func refusal(_ error: AppError) -> Response {
        let status = ErrorResponses.status(error)
        var object = JSONObjectWriter()
        object.add("error", sentence(for: error))
        object.add("code", error.code.description)
        if error.code == .recordedInvalid {
            if let domain = error.domain { object.add("domain", domain) }
            if let domainCode = error.domainCode { object.add("domainCode", domainCode) }
            object.add("recorded", rawJSON: array(error.recordedEvents))
        }
        return ErrorResponses.body(status, object.finish())
    }

    /// The domain's sentence; for something unknown, with the route that lists what exists (as
    /// esctl adds the `esctl query` that does).
    static func sentence(for error: AppError) -> String {
        guard let listing = error.listedBy else { return error.message }
        let scope = ["campers", "campsites", "reservations"].contains(listing) ? "campground" : "user"
        let base = error.message.hasSuffix(".") ? String(error.message.dropLast()) : error.message
        return "\(base); GET /projections/\(listing)?\(scope)=... lists them."
    }
}
