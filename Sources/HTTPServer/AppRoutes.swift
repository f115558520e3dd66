import AppModules
import Commands
import EventStore
import Hummingbird
import NIOCore
import WireFormat

extension Server {
    /// Every command of the registered app modules: `POST /apps/{app}/{command}` with a JSON
    /// object body of the command's declared fields (each checked before it runs: 400 naming the
    /// field at fault), answered with the events recorded (201; 200 `[]` when nothing needed
    /// recording) or the app's state object. A refusal of the app's rules answers 422 with the
    /// app's code, a name that does not exist 404, a conflict 409.
    func addAppRoutes(to router: Router<ServerContext>) {
        for routed in commands {
            let path = routed.path
            let command = routed.command
            router.post(RouterPath(path)) { request, context -> Response in
                var request = request
                let buffer = try await request.collectBody(context)
                let input = try AppInput(json: Array(buffer.readableBytesView), source: "the body of POST \(path)", fields: command.fields)
                do {
                    let answer = try await command.run(input)
                    self.warnPassedOver(answer.passedOver)
                    return AppAnswers.response(answer)
                } catch let error as any AppRefusal {
                    return AppAnswers.refusal(error)
                }
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

/// What an app route answers, as JSON.
enum AppAnswers {
    /// The events a command recorded (esctl's `--json` lines, as one JSON array: 201 when
    /// something was recorded, 200 when nothing was), or a state object (201 after a command that
    /// recorded: an app that answers with a display, say).
    static func response(_ answer: AppAnswer) -> Response {
        switch answer.body {
        case let .events(events):
            return ErrorResponses.body(events.isEmpty ? .ok : .created, array(events))
        case let .state(value, recorded):
            return ErrorResponses.body(recorded ? .created : .ok, value.serialized)
        }
    }

    /// The events as a JSON array of `esctl replay --json` objects.
    static func array(_ events: [RecordedEvent]) -> String {
        "[" + events.map(EventJSON.line).joined(separator: ",") + "]"
    }

    /// An app's refusal as JSON: its sentence (pointing to the projection route that lists what
    /// exists, where esctl points to `esctl query`), its code and details, and what it recorded
    /// anyway (`recorded`, as esctl prints those events and then exits 1).
    static func refusal(_ error: any AppRefusal) -> Response {
        var object = JSONObjectWriter()
        object.add("error", sentence(for: error))
        object.add("code", error.codeName)
        for (key, value) in error.details { object.add(key, rawJSON: value.description) }
        if !error.recordedEvents.isEmpty { object.add("recorded", rawJSON: array(error.recordedEvents)) }
        return ErrorResponses.body(ErrorResponses.status(error), object.finish())
    }

    /// The app's sentence; for something unknown, with the route that lists what exists.
    static func sentence(for error: any AppRefusal) -> String {
        guard let listing = error.listing else { return error.message }
        let base = error.message.hasSuffix(".") ? String(error.message.dropLast()) : error.message
        return "\(base); GET /projections/\(listing.projection)?\(listing.parameter)=... lists them."
    }
}
