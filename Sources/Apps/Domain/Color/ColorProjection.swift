import EventStoreCore
import Projections

/// Each calculator's display and what it shows: hex text, RGBO text, name, color, whether a
/// color could be derived. Query parameter: `calculator` (default "default"); a calculator never
/// touched answers the starting display.
public struct ColorProjection: Projection {
    public let name = "color"
    public let version = 2
    public let tables = ["calculators"]
    /// Its apps' events, and deletions: a deleted stream's row goes with it.
    public let eventTypes: Set<String>? = ColorEvent.types.union([StreamDeletion.eventType])
    /// Anyone may append to a calculator's stream: an event that does not decode is passed over.
    public let errorPolicy = ProjectionErrorPolicy.skip
    public let queryParameters = [QueryParameter("calculator", "the calculator (default: default)")]

    public init() {}

    public func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
        if event.type == StreamDeletion.eventType {
            if let key = AppStreams.deletedRowKey(event, prefix: AppStreams.colorPrefix) { try state.delete("calculators", key) }
            return
        }
        guard let key = AppStreams.rowKey(of: event.stream, prefix: AppStreams.colorPrefix) else { return }
        var display = try state.get("calculators", key, as: ColorDisplay.self) ?? .start
        display.apply(try ColorEvent(recorded: event))
        try state.put("calculators", key, display)
    }

    /// `{"calculator","hexText","rgboText","name","color":{"red","green","blue","opacity"},"derived"}`.
    public func query(_ state: some StateReader, _ parameters: QueryParameters) async throws -> JSONValue {
        let calculator = parameters.value("calculator", default: AppStreams.defaultKey)
        return (try await state.get("calculators", RowKey(calculator), as: ColorDisplay.self) ?? .start).json(calculator: calculator)
    }
}
