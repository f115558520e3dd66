import Apps
import Commands
import ConsumerGroups
import EventStore
import HTTPTypes
import Hummingbird
import Projections
import Testing
import WireFormat

@testable import HTTPServer

/// Every code of every error type says its own HTTP status and exit code (``CodedError``): this
/// table is the contract scripts and clients rely on, as docs/esctl.md and openapi.yaml document it.
/// A code added without a row here fails the count check below.
@Suite("Errors: one shape, each code's status and exit code")
struct ErrorShapeTests {
    /// (code, HTTP status, exit code) of every code of each type.
    static let storeCodes: [(EventStoreError.Code.Base, Int, Int32)] = [
        (.invalidInput, 400, 64), (.versionConflict, 409, 65), (.idempotencyConflict, 409, 66), (.notFound, 404, 67),
        (.storeUnavailable, 503, 69), (.damaged, 500, 69), (.storageFull, 500, 69), (.closed, 503, 69),
        (.storageFailure, 500, 70), (.alreadyProcessed, 409, 65), (.upcastFailed, 500, 70), (.streamTombstoned, 410, 1),
        (.conditionFailed, 409, 65), (.outcomeUnknown, 503, 69),
    ]
    static let appCodes: [(AppError.Code.Base, Int, Int32)] = [
        (.goalNotSet, 422, 1), (.invalidState, 422, 1), (.invalidInput, 400, 64), (.notFound, 404, 67), (.duplicate, 422, 1),
        (.recordedInvalid, 422, 1),
    ]
    static let projectionCodes: [(ProjectionError.Code.Base, Int, Int32)] = [
        (.unknownProjection, 404, 67), (.invalidDefinition, 400, 70), (.invalidQuery, 400, 64), (.stopped, 503, 70),
        (.damagedState, 500, 69), (.timedOut, 412, 75), (.notCaughtUp, 503, 69),
    ]
    static let commandCodes: [(CommandError.Code.Base, Int, Int32)] = [(.conflict, 409, 65), (.unencodable, 400, 64)]
    static let groupCodes: [(ConsumerGroupError.Code.Base, Int, Int32)] = [
        (.invalidInput, 400, 64), (.notFound, 404, 67), (.alreadyExists, 409, 65), (.leaseLost, 409, 65), (.alreadySettled, 409, 65),
    ]
    static let wireCodes: [(WireFormatError.Code.Base, Int, Int32)] = [
        (.invalidLine, 400, 64), (.invalidEvent, 400, 64), (.invalidBatch, 400, 64), (.invalidQuery, 400, 64),
    ]
    static let serverCodes: [(ServerError.Code.Base, Int, Int32)] = [
        (.badRequest, 400, 64), (.unauthorized, 401, 64), (.forbidden, 403, 64), (.notFound, 404, 67), (.methodNotAllowed, 405, 64),
        (.notAcceptable, 406, 64), (.payloadTooLarge, 413, 64), (.unsupportedMediaType, 415, 64), (.misdirected, 421, 64),
        (.requestTimeout, 408, 75), (.tooManyRequests, 429, 64), (.invalidConfiguration, 400, 64), (.unavailable, 503, 69),
        (.internalError, 500, 70),
    ]

    @Test("every code of every error type has its row, and says the status and exit code of that row")
    func everyCode() {
        // Given every error type's codes, when each is made into an error, then it answers its row
        check(Self.storeCodes, all: EventStoreError.Code.Base.allCases) { EventStoreError(EventStoreError.Code($0), "m") }
        check(Self.appCodes, all: AppError.Code.Base.allCases) { AppError(AppError.Code($0), "m") }
        check(Self.projectionCodes, all: ProjectionError.Code.Base.allCases) { ProjectionError(ProjectionError.Code($0), "m") }
        check(Self.commandCodes, all: CommandError.Code.Base.allCases) { CommandError(CommandError.Code($0), "m") }
        check(Self.groupCodes, all: ConsumerGroupError.Code.Base.allCases) { ConsumerGroupError(ConsumerGroupError.Code($0), "m") }
        check(Self.wireCodes, all: WireFormatError.Code.Base.allCases) { WireFormatError(WireFormatError.Code($0), "m") }
        check(Self.serverCodes, all: ServerError.Code.Base.allCases) { ServerError(ServerError.Code($0), "m") }
        // And the categories' exit codes are docs/esctl.md's table (esctl's ExitStatus, without
        // success and the signals)
        #expect(ErrorCategory.allCases.map(\.exitCode) == [1, 64, 65, 66, 67, 69, 70, 75])
    }

    @Test("the API's answer to an error is its status, its sentence and its code, with the details it carries")
    func response() throws {
        // Given a version conflict on two streams
        let conflict = EventStoreError.versionConflict([
            VersionConflict(stream: "a", expected: .noStream, actual: 2), VersionConflict(stream: "b", expected: .exact(1), actual: 3),
        ])
        // When the server answers it
        let response = ErrorResponses.response(for: conflict)
        // Then it is a 409 with the first stream's versions, every stream's, and the Current-Version header
        #expect(response.status == .conflict)
        #expect(response.headers[HTTPField.Name("Current-Version")!] == "2")
        #expect(
            conflict.details.map { "\($0.0)=\($0.1)" } == [
                "stream=\"a\"", "expected=\"no-stream\"", "actual=2",
                "conflicts=[{\"stream\":\"a\",\"expected\":\"no-stream\",\"actual\":2},{\"stream\":\"b\",\"expected\":\"1\",\"actual\":3}]",
            ])
        // And an error of a type the server knows nothing special about answers by its own shape
        let lost = ErrorResponses.response(for: ConsumerGroupError(.leaseLost, "The lease ran out."))
        #expect(lost.status == .conflict)
        // And one that is not ours is a 500
        struct Strange: Error {}
        #expect(ErrorResponses.response(for: Strange()).status == .internalServerError)
    }

    private func check<Base: Hashable>(
        _ rows: [(Base, Int, Int32)], all: [Base], _ make: (Base) -> any CodedError, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(Set(rows.map(\.0)) == Set(all), "a code without its row, or a row for no code", sourceLocation: sourceLocation)
        for (base, status, exit) in rows {
            let error = make(base)
            #expect(error.httpStatus == status, "\(error.codeName): HTTP \(error.httpStatus), not \(status)", sourceLocation: sourceLocation)
            #expect(error.category.exitCode == exit, "\(error.codeName): exit \(error.category.exitCode), not \(exit)", sourceLocation: sourceLocation)
            #expect(error.codeName == "\(base)", sourceLocation: sourceLocation)
            #expect(error.message == "m", sourceLocation: sourceLocation)
        }
    }
}
