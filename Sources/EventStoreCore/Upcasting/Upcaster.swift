/// One step of an event type's schema evolution: it turns the data of `type` recorded at schema
/// version `version` into the data of version `version + 1`, and may rename the type on the way.
///
/// A store opened with upcasters (``StoreConfiguration/upcasters``) applies them on every read path
/// (reads, streams, subscriptions, table transactions, and so projections, rebuilds and the
/// command handler's loads), step after step, so readers see each event in its type's newest
/// shape. The stored bytes never change; ``RecordedEvent/schemaVersion`` still says the version
/// the event was recorded in. Steps see personal data opened: a forgotten subject's fields hold
/// `{"$forgotten":"SUBJECT"}`, which a step must pass along rather than fail on (a step that
/// throws stops the projections that read the type, and their rebuild after the forget).
///
/// ```swift
/// // Version 2 of CustomerRegistered keeps the personal fields under "contact".
/// let step = Upcaster("CustomerRegistered", from: 1) { data in
///     ["customerId": data["customerId"] ?? .null,
///      "contact": ["fullName": data["fullName"] ?? .null, "phoneNumber": data["phoneNumber"] ?? .null]]
/// }
/// ```
public struct Upcaster: Sendable {
    /// The type name the step reads (as recorded, or as an earlier step renamed it).
    public let type: String
    /// The schema version the step reads; it gives version + 1.
    public let version: UInt16
    /// The type's new name from version + 1 on; nil keeps the name.
    public let renamedTo: String?
    /// Bump it when the transform changes without a new version (a fix), so that the projections
    /// that consume the type rebuild with it.
    public let revision: Int
    /// The transform of the event's data, as JSON.
    let transform: @Sendable (JSONValue) throws -> JSONValue

    /// A step from `version` of `type` to `version + 1` (of `newType` when given). `transform`
    /// gets the data as JSON and returns the new data; what it throws makes reads of such an
    /// event fail with ``EventStoreError/Code/upcastFailed`` (so return data it does not
    /// recognise unchanged: typed readers then pass it over). An event whose data is not JSON
    /// is not given to any step: it reads as stored.
    public init(
        _ type: String, from version: UInt16, renamingTo newType: String? = nil, revision: Int = 1,
        _ transform: @escaping @Sendable (JSONValue) throws -> JSONValue
    ) {
        self.type = type
        self.version = version
        self.renamedTo = newType
        self.revision = revision
        self.transform = transform
    }

    /// The type name the step gives.
    var resultType: String { renamedTo ?? type }

    /// What identifies the step in a fingerprint: the type, the versions, the new name, the revision.
    var identity: String {
        "\(type)@\(version)->\(resultType)@\(Int(version) + 1)#\(revision)"
    }
}
