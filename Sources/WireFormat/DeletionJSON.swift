import EventStoreCore

/// Deletions, stream facts and retention policies as JSON, the same for esctl and the server.
public enum DeletionJSON {
    /// `{"stream","fromVersion","toVersion","count","hard","reason","types","position"}`.
    public static func object(_ deletion: StreamDeletion) -> String {
        var object = JSONObjectWriter()
        object.add("stream", deletion.stream)
        object.add("fromVersion", deletion.fromVersion)
        object.add("toVersion", deletion.toVersion)
        object.add("count", deletion.count)
        object.add("hard", deletion.hard)
        object.add("reason", deletion.reason)
        object.add("types", rawJSON: "[" + deletion.types.map(JSONWriter.quote).joined(separator: ",") + "]")
        object.add("position", deletion.position)
        return object.finish()
    }

    /// `{"removed":N,"deletions":[...]}`: what a purge removed.
    public static func purge(_ deletions: [StreamDeletion]) -> String {
        var object = JSONObjectWriter()
        object.add("removed", deletions.reduce(UInt64(0)) { $0 &+ $1.count })
        object.add("deletions", rawJSON: "[" + deletions.map(Self.object).joined(separator: ",") + "]")
        return object.finish()
    }

    /// `{"stream","version","firstVersion","eventCount","tombstoned","retention"}`.
    public static func object(_ info: StreamInfo) -> String {
        var object = JSONObjectWriter()
        object.add("stream", info.stream)
        object.add("version", info.version)
        object.add("firstVersion", info.firstVersion)
        object.add("eventCount", info.eventCount)
        object.add("tombstoned", info.isTombstoned)
        object.add("retention", rawJSON: policy(info.retention))
        return object.finish()
    }

    /// `{"maxCount"?,"maxAgeSeconds"?,"truncateBefore"?}`, or `null` for no policy.
    public static func policy(_ policy: RetentionPolicy?) -> String {
        guard let policy else { return "null" }
        var object = JSONObjectWriter()
        if let count = policy.maxCount { object.add("maxCount", count) }
        if let age = policy.maxAge { object.add("maxAgeSeconds", rawJSON: seconds(age)) }
        if let before = policy.truncateBefore { object.add("truncateBefore", before) }
        return object.finish()
    }

    /// A duration in seconds, as a JSON number.
    public static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return attoseconds == 0 ? String(seconds) : String(Double(seconds) + Double(attoseconds) / 1e18)
    }
}

/// What a forget did, as JSON, the same for esctl and the server.
public enum ForgettingJSON {
    /// `{"subject","key","requestPosition","forgottenPosition","alreadyForgotten","known"}`: `key`
    /// is the id of the key destroyed (never the key); it and the positions are null when nothing
    /// was left to forget; `known` is false when no data was ever marked personal to the subject.
    public static func object(_ forgetting: SubjectForgetting) -> String {
        var object = JSONObjectWriter()
        object.add("subject", forgetting.subject)
        object.add("key", forgetting.keyID)
        object.add("requestPosition", rawJSON: forgetting.requestPosition.map { String($0) } ?? "null")
        object.add("forgottenPosition", rawJSON: forgetting.forgottenPosition.map { String($0) } ?? "null")
        object.add("alreadyForgotten", forgetting.wasAlreadyForgotten)
        object.add("known", forgetting.isKnown)
        return object.finish()
    }
}
