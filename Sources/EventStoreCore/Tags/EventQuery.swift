/// Which events a decision depends on, by type and tag: the query of a conditional append
/// (``AppendCondition``) and of ``LogReading/read(_:after:limit:)``.
///
/// An event matches the query when it matches any of its items. An item matches an event whose
/// type is among the item's ``QueryItem/types`` (none listed: any type) and that carries every
/// one of the item's ``QueryItem/tags``.
public struct EventQuery: Sendable, Hashable {
    /// The items, any of which may match; at least one, at most ``Limits/maximumQueryItems``.
    public var items: [QueryItem]

    /// A query of the given items.
    public init(_ items: [QueryItem]) {
        self.items = items
    }

    /// A query of one item.
    public init(types: [String] = [], tags: [String] = []) {
        self.items = [QueryItem(types: types, tags: tags)]
    }

    /// Every event: one item with neither types nor tags.
    public static let all = EventQuery([QueryItem()])

    /// The index of the first item that matches an event of `type` carrying `tags`, or nil.
    public func matchingItem(type: String, tags: [String]) -> Int? {
        items.firstIndex { $0.matches(type: type, tags: tags) }
    }

    /// Checks the query against ``Limits``: at least one item, each with at most
    /// ``Limits/maximumTagsPerEvent`` types and tags, each a valid name or tag. Throws
    /// ``EventStoreError/Code/invalidInput`` naming the rule broken.
    public func validate() throws(EventStoreError) {
        if items.isEmpty {
            throw EventStoreError(
                .invalidInput, "The query has no items; give at least one (an item with no types and no tags matches every event).")
        }
        if items.count > Limits.maximumQueryItems {
            throw EventStoreError(
                .invalidInput, "The query has \(items.count) items; give at most \(Limits.maximumQueryItems).")
        }
        for item in items {
            if item.types.count > Limits.maximumTagsPerEvent || item.tags.count > Limits.maximumTagsPerEvent {
                throw EventStoreError(
                    .invalidInput,
                    "A query item lists \(max(item.types.count, item.tags.count)) \(item.types.count > item.tags.count ? "types" : "tags"); give at most \(Limits.maximumTagsPerEvent).")
            }
            for type in item.types { try Limits.validateName(type, kind: "event type") }
            for tag in item.tags { try Limits.validateTag(tag) }
        }
    }
}

/// One item of an ``EventQuery``: events of any of these types (none: any type) that carry all
/// of these tags (none: any event of those types).
public struct QueryItem: Sendable, Hashable {
    /// The types an event may have to match; empty: any type.
    public var types: [String]
    /// The tags an event must all carry to match; empty: no tag is needed.
    public var tags: [String]

    /// An item of these types and tags.
    public init(types: [String] = [], tags: [String] = []) {
        self.types = types
        self.tags = tags
    }

    /// Whether an event of `type` carrying `tags` matches this item. Names compare byte by byte
    /// (their UTF-8), as the store's indexes compare them.
    public func matches(type: String, tags eventTags: [String]) -> Bool {
        guard types.isEmpty || types.contains(where: { $0.utf8.elementsEqual(type.utf8) }) else { return false }
        return tags.allSatisfy { tag in eventTags.contains { $0.utf8.elementsEqual(tag.utf8) } }
    }

    /// The item's types without repeats, in their order, compared byte by byte as the indexes
    /// compare names: a `Set` of strings would merge two that differ only in their Unicode form
    /// (`"caf\u{E9}"` and `"cafe\u{301}"`), and one of them would go unread.
    package var distinctTypes: [String] {
        var seen = Set<[UInt8]>()
        return types.filter { seen.insert(Array($0.utf8)).inserted }
    }
}

/// The condition of a conditional append (dynamic consistency boundary): the append fails, and
/// writes nothing, when an event recorded after ``after`` matches ``failIfEventsMatch``.
///
/// Read what the decision needs with ``LogReading/read(_:after:limit:)``, decide, and append with
/// the same query and the head that read returned: no other writer can have recorded a fact the
/// decision did not see. Without `after`, the whole log is checked (a uniqueness rule: "no event
/// matching this query exists at all").
public struct AppendCondition: Sendable, Hashable {
    /// The query no event after ``after`` may match.
    public var failIfEventsMatch: EventQuery
    /// The position the decision was made at (exclusive); nil: the whole log.
    public var after: UInt64?

    /// A condition on `query` after position `after` (nil: the whole log).
    public init(failIfEventsMatch query: EventQuery, after: UInt64? = nil) {
        self.failIfEventsMatch = query
        self.after = after
    }
}

/// What ``LogReading/read(_:after:limit:)`` found: the matching events and the head the read saw,
/// the position to append after.
public struct QueryResult: Sendable, Equatable {
    /// The matching events, in position order.
    public let events: [RecordedEvent]
    /// The head of the log when the read was made: pass it as ``AppendCondition/after`` when
    /// the read was the whole of what matches (not cut short by its limit).
    public let head: UInt64

    public init(events: [RecordedEvent], head: UInt64) {
        self.events = events
        self.head = head
    }
}
