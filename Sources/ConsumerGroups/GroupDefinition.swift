import EventStoreCore
import Foundation

/// What a consumer group consumes and how it shares the work: the events (the whole log, a
/// category, or a query), the key that orders them (the stream, or a tag with a prefix), how many
/// partitions the keys hash into, how many failed tries park an event, and how long a member's
/// lease on a partition lasts without renewal.
public struct GroupDefinition: Sendable, Equatable {
    /// Which events the group consumes.
    public enum Source: Sendable, Equatable {
        /// Every event of the log.
        case log
        /// The events of one category (streams named `CATEGORY-...`).
        case category(String)
        /// The events a query matches.
        case query(EventQuery)
    }

    /// What orders the events: events of one key are delivered one at a time, in position order.
    public enum PartitionKey: Sendable, Equatable {
        /// The event's stream.
        case stream
        /// The event's first tag that starts with the prefix (the whole tag); events without
        /// one share the empty key.
        case tagPrefix(String)
    }

    /// The group's name: non-empty, at most 200 bytes, no control characters.
    public var name: String
    public var source: Source
    public var partitionBy: PartitionKey
    /// How many partitions the keys hash into (1 to 256): the most members that work at once.
    public var partitions: Int
    /// After this many failed tries (1 to 1,000) an event is parked.
    public var maxTries: Int
    /// How long a lease lasts without renewal (at least a second); a member renews at each poll.
    public var leaseDuration: Duration

    public init(
        name: String, source: Source = .log, partitionBy: PartitionKey = .stream, partitions: Int = 16, maxTries: Int = 5,
        leaseDuration: Duration = .seconds(10)
    ) {
        self.name = name
        self.source = source
        self.partitionBy = partitionBy
        self.partitions = partitions
        self.maxTries = maxTries
        self.leaseDuration = leaseDuration
    }

    /// Checks the definition; throws ``ConsumerGroupError/Code/invalidInput`` naming the rule broken.
    public func validate() throws {
        try GroupNames.validate(name, kind: "group")
        guard (1...256).contains(partitions) else {
            throw ConsumerGroupError(.invalidInput, "A group has 1 to 256 partitions; \(partitions) is out of range.")
        }
        guard (1...1_000).contains(maxTries) else {
            throw ConsumerGroupError(.invalidInput, "A group's maximum tries is 1 to 1,000; \(maxTries) is out of range.")
        }
        guard leaseDuration >= .seconds(1) else {
            throw ConsumerGroupError(.invalidInput, "A lease lasts at least a second; give a longer lease duration.")
        }
        switch source {
        case .log: break
        case let .category(category):
            guard !category.isEmpty, !category.contains("-") else {
                throw ConsumerGroupError(.invalidInput, "The category '\(category)' is empty or holds a '-'; give the part of stream names before their first '-'.")
            }
        case let .query(query):
            do { try query.validate() } catch { throw ConsumerGroupError(.invalidInput, error.message) }
        }
        if case let .tagPrefix(prefix) = partitionBy, prefix.isEmpty {
            throw ConsumerGroupError(.invalidInput, "The tag prefix to partition by is empty; give one such as 'camper:'.")
        }
    }

    /// The key of `event` that orders it.
    func key(of event: RecordedEvent) -> String {
        switch partitionBy {
        case .stream: return event.stream
        case let .tagPrefix(prefix): return event.tags.first { $0.utf8.starts(with: prefix.utf8) } ?? ""
        }
    }

    /// The partition of `event`: its key's FNV-1a hash modulo ``partitions`` (the same in every process).
    func partition(of event: RecordedEvent) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key(of: event).utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return Int(hash % UInt64(partitions))
    }

    // MARK: Stored form

    /// The definition as stored: one JSON object, with the id of its creation.
    func json(creation: String) -> [UInt8] {
        var object: [(String, JSONValue)] = [("creation", .string(creation))]
        switch source {
        case .log: object.append(("source", "log"))
        case let .category(category): object += [("source", "category"), ("category", .string(category))]
        case let .query(query):
            object.append(("source", "query"))
            object.append(("query", .array(query.items.map { .object([("types", .array($0.types.map(JSONValue.string))), ("tags", .array($0.tags.map(JSONValue.string)))]) })))
        }
        switch partitionBy {
        case .stream: object.append(("partitionBy", "stream"))
        case let .tagPrefix(prefix): object.append(("partitionBy", .string("tag:" + prefix)))
        }
        object += [
            ("partitions", .int(Int64(partitions))), ("maxTries", .int(Int64(maxTries))),
            ("leaseMilliseconds", .int(Int64(leaseDuration.components.seconds) * 1_000 + leaseDuration.components.attoseconds / 1_000_000_000_000_000)),
        ]
        return Array(JSONValue.object(object).serialized.utf8)
    }

    /// A stored definition; nil when the bytes are not one.
    init?(name: String, stored bytes: UnsafeRawBufferPointer) {
        guard let value = try? JSONValue(parsing: Array(bytes)), let source = value["source"]?.stringValue,
            let partitionBy = value["partitionBy"]?.stringValue, let partitions = value["partitions"]?.intValue,
            let maxTries = value["maxTries"]?.intValue, let lease = value["leaseMilliseconds"]?.intValue
        else { return nil }
        switch source {
        case "log": self.source = .log
        case "category":
            guard let category = value["category"]?.stringValue else { return nil }
            self.source = .category(category)
        case "query":
            guard let items = value["query"]?.arrayValue else { return nil }
            self.source = .query(EventQuery(items.map {
                QueryItem(types: $0["types"]?.arrayValue?.compactMap(\.stringValue) ?? [], tags: $0["tags"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            }))
        default: return nil
        }
        if partitionBy == "stream" {
            self.partitionBy = .stream
        } else if partitionBy.hasPrefix("tag:") {
            self.partitionBy = .tagPrefix(String(partitionBy.dropFirst(4)))
        } else {
            return nil
        }
        self.name = name
        self.partitions = Int(partitions)
        self.maxTries = Int(maxTries)
        self.leaseDuration = .milliseconds(lease)
    }
}

/// The rules names of groups and members follow: those of stream names.
enum GroupNames {
    static func validate(_ name: String, kind: String) throws {
        do {
            try Limits.validateName(name, kind: kind)
        } catch {
            throw ConsumerGroupError(.invalidInput, error.message)
        }
    }
}
