import EventStoreCore

/// A projection with a fast path for rebuilds and catch-ups: each event is decoded by the
/// projection's own code straight from its stored bytes, read in place (`EventView`), into a
/// value of its own type, which `apply` then folds. No `RecordedEvent` is made for it on LMDB,
/// and no `Decoder` runs unless the projection's decoder chooses to.
///
/// Write one where a projection folds many events and its profile says decoding costs; the plain
/// ``Projection`` stays the simple way. Both paths fold alike: the runner's fast path reads views
/// in place, and `Projection.apply(_:to:)` (for folds in memory, and backends that cannot
/// read in place) decodes a view of the recorded event with the same `decode`. The view is the
/// event as readers see it: personal data opened (or its forgotten marker), upcast by the
/// store's upcasters.
///
/// ```swift
/// struct StepTotals: TypedProjection {
///     // name, version, tables, eventTypes, errorPolicy, queryParameters, query: as in Projection
///     func decode(_ event: EventView) throws -> (RowKey, Int)? { ... }   // from event.data's bytes
///     func apply(_ event: (RowKey, Int), to state: inout ProjectionState) throws { ... }
/// }
/// ```
public protocol TypedProjection: Projection {
    /// What ``decode(_:)`` makes of an event: whatever `apply(_:to:)` needs of it, as values
    /// (not the view, which lives only during the call).
    associatedtype Event

    /// Decodes an event. Nil: the projection has nothing to do with it. Throws when the event
    /// is not what the projection expects: to the runner, as `apply` throwing (the
    /// ``Projection/errorPolicy`` decides), so a decoder written by hand should throw what the
    /// `Decodable` path would (falling back to it for what it does not take is the simple way).
    func decode(_ event: EventView) throws -> Event?

    /// Folds one decoded event into the state, under the rules of `Projection.apply(_:to:)`.
    func apply(_ event: Event, to state: inout ProjectionState) throws

    /// ``decode(_:)`` then ``apply(_:to:)``: how the runner's fast path folds a view. Do not
    /// implement it: the default is the one that folds as `apply(_:to:)` of a recorded event
    /// does, and a method of this name in a conforming type replaces it on the runner's fast
    /// path. It is a requirement, and inlinable, only so that each conforming type's witness is
    /// code specialized for its `Event`: a generic call from this module looked the type's
    /// metadata up for every event (`Optional<Event>`; 1.7 % of a rebuild's fold, BENCHMARKS.md).
    func apply(view: EventView, to state: inout ProjectionState) throws
}

extension TypedProjection {
    /// The typed path, for a recorded event: a view of it, decoded and applied.
    public func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
        guard let decoded = try EventView.withView(of: event, decode) else { return }
        try apply(decoded, to: &state)
    }

    /// `decode` then `apply`, as the runner's fast path folds a view.
    @inlinable
    public func apply(view: EventView, to state: inout ProjectionState) throws {
        guard let decoded = try decode(view) else { return }
        try apply(decoded, to: &state)
    }
}

/// How a fold applies one view: a typed projection's decode and apply, opened from the
/// existential once per batch.
typealias ViewApply = (EventView, inout ProjectionState) throws -> Void

extension Projection {
    /// The fast path's apply when this projection is a ``TypedProjection``; nil otherwise.
    var viewApply: ViewApply? {
        guard let typed = self as? any TypedProjection else { return nil }
        return Self.viewApply(of: typed)
    }

    private static func viewApply<P: TypedProjection>(of projection: P) -> ViewApply {
        { view, state in try projection.apply(view: view, to: &state) }
    }
}
