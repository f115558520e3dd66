import ArgumentParser
import EventStore

/// The event filters `replay` and `subscribe` share.
struct FilterOptions: ParsableArguments {
    @Option(name: .customLong("type"), help: ArgumentHelp("Only events of this type (repeatable).", valueName: "T"))
    var types: [String] = []

    @Option(help: ArgumentHelp(
        "Only events of streams in this category: the part of the stream name before its first '-' (a trailing '-' is ignored).",
        valueName: "C"))
    var category: String?

    @Option(help: ArgumentHelp("Only events whose stream name starts with this prefix.", valueName: "PREFIX"))
    var prefix: String?

    func validate() throws {
        // An empty filter would match everything here and nothing elsewhere: refused, as the
        // server's routes refuse `category=`.
        for (flag, value) in [("--category", category), ("--prefix", prefix)] + types.map({ ("--type", $0) }) where value?.isEmpty == true {
            throw ValidationError("\(flag) is empty; give it a value, or leave it out to take every event.")
        }
        if let category, EventFilter(category: category).category?.contains("-") == true {
            throw ValidationError(
                "A category is the part of a stream name before its first '-', so '\(category)' names none; use --prefix \(category) to match names that start with it.")
        }
    }

    /// The filter, narrowed to one stream when `stream` is given.
    func filter(stream: String? = nil) -> EventFilter {
        EventFilter(stream: stream, category: category, streamPrefix: prefix, types: types.isEmpty ? nil : Set(types))
    }
}
