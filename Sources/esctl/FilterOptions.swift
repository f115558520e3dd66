import ArgumentParser
import EventStore

/// The event filters `replay` and `subscribe` share.
struct FilterOptions: ParsableArguments {
    @Option(name: .customLong("type"), help: ArgumentHelp("Only events of this type (repeatable).", valueName: "T"))
    var types: [String] = []

    @Option(help: ArgumentHelp("Only events whose stream name starts with this prefix.", valueName: "C"))
    var category: String?

    /// The filter, narrowed to one stream when `stream` is given.
    func filter(stream: String? = nil) -> EventFilter {
        EventFilter(stream: stream, category: category, types: types.isEmpty ? nil : Set(types))
    }
}
