import Foundation

/// A store's upcasters, checked and indexed: the one decode pipeline every read path of every
/// backend runs its events through (``upcast(_:)``), and what a projection's rebuild hash takes
/// from them (``fingerprint(consuming:)``).
package struct Upcasting: Sendable {
    private struct StepKey: Hashable {
        let type: String
        let version: UInt16
    }

    private let steps: [StepKey: Upcaster]
    /// A one-word Bloom filter of the type names steps read, by their length, first and last
    /// bytes (``bit(of:)``): most events of a store with upcasters are of types that never
    /// evolved, and this turns nearly all of them away without hashing their type.
    private let typeFilter: UInt64
    /// Whether a step renames a type: then a filter by type also reads the older names, and
    /// checks the name again after upcasting.
    private let renames: Bool

    /// No upcasters: every event reads as stored.
    package static let none = Upcasting(checked: [:])

    /// Whether there is no upcaster (every read is as stored).
    package var isEmpty: Bool { steps.isEmpty }

    private init(checked steps: [StepKey: Upcaster]) {
        self.steps = steps
        typeFilter = steps.keys.reduce(0) { $0 | Self.bit(of: $1.type) }
        renames = steps.values.contains { $0.renamedTo != nil }
    }

    /// Checks the chains: each type's steps go from version 1 (or from where a step renamed
    /// another type into it) one version at a time, with no step twice and none missing.
    ///
    /// Throws ``EventStoreError`` with ``EventStoreError/Code/invalidInput`` naming the type and
    /// the versions of a gap, a duplicate, a version out of range or a bad name.
    package init(_ upcasters: [Upcaster]) throws(EventStoreError) {
        var steps: [StepKey: Upcaster] = [:]
        for step in upcasters {
            guard !step.type.isEmpty, step.renamedTo.map({ !$0.isEmpty && $0 != step.type }) ?? true else {
                throw EventStoreError(.invalidInput, "An upcaster of '\(step.type)' has an empty type name or renames the type to itself.")
            }
            guard step.version >= 1, step.version < UInt16.max else {
                throw EventStoreError(
                    .invalidInput, "The upcaster of '\(step.type)' from version \(step.version) is out of range: versions go from 1 to \(UInt16.max).")
            }
            let key = StepKey(type: step.type, version: step.version)
            guard steps[key] == nil else {
                throw EventStoreError(.invalidInput, "Two upcasters of '\(step.type)' start at version \(step.version); register one.")
            }
            steps[key] = step
        }
        // Where each type's events start: version 1, or where steps rename other types into it.
        var renamedInto: [String: Set<UInt16>] = [:]
        for step in steps.values {
            if let renamed = step.renamedTo { renamedInto[renamed, default: []].insert(step.version + 1) }
        }
        var versionsByType: [String: Set<UInt16>] = [:]
        for key in steps.keys { versionsByType[key.type, default: []].insert(key.version) }
        // A type that steps rename into, with no steps of its own, is entered at one version only:
        // events entered at an older one would stop short of the newest shape.
        for (type, starts) in renamedInto where versionsByType[type] == nil && starts.count > 1 {
            let sorted = starts.sorted()
            throw EventStoreError(
                .invalidInput,
                "Steps rename types into '\(type)' at versions \(sorted.map(String.init).joined(separator: " and ")), and it has no steps from \(sorted[0]) on: register them.")
        }
        for (type, versions) in versionsByType {
            guard let first = versions.min(), let last = versions.max() else { continue }
            if let missing = (first...last).first(where: { !versions.contains($0) }) {
                throw EventStoreError(
                    .invalidInput,
                    "The upcasters of '\(type)' have a gap: none goes from version \(missing) to \(Int(missing) + 1), so events of that version would read in an old shape; register it.")
            }
            let starts = renamedInto[type] ?? [1]
            if let start = starts.min(), start < first {
                throw EventStoreError(
                    .invalidInput,
                    "The upcasters of '\(type)' start at version \(first), but its events start at version \(start): register the steps from \(start) to \(first).")
            }
            if let start = starts.max(), Int(start) > Int(last) + 1 {
                throw EventStoreError(
                    .invalidInput,
                    "A step renames a type into '\(type)' at version \(start), past its newest version \(Int(last) + 1): register the steps of '\(type)' up to \(start).")
            }
        }
        self.init(checked: steps)
    }

    /// The newest version the steps bring events of `type` to: one past its last step, or where
    /// a step renames another type into it; 1 when no step concerns it.
    package func newestVersion(of type: String) -> UInt16 {
        var newest: UInt16 = 1
        for step in steps.values {
            if step.type == type || step.renamedTo == type { newest = max(newest, step.version + 1) }
        }
        return newest
    }

    /// Checks that the steps bring every older event of each type to the version the code
    /// writes and reads (`versions`: type name → schema version, an `EventData`'s
    /// ``EventData/schemaVersion``), and no further, so that typed readers never meet another
    /// shape than their own.
    ///
    /// Throws ``EventStoreError/Code/invalidInput`` naming the first type they do not reach, or
    /// take past the version given.
    package func check(reaching versions: [String: UInt16]) throws(EventStoreError) {
        for (type, version) in versions.sorted(by: { $0.key < $1.key }) {
            let newest = newestVersion(of: type)
            if newest < version {
                throw EventStoreError(
                    .invalidInput,
                    "'\(type)' is written in version \(version), but the store's upcasters bring older '\(type)' events only to version \(newest); open the store with the upcasters of every version (StoreConfiguration.upcasters).")
            }
            if steps[StepKey(type: type, version: version)] != nil {
                throw EventStoreError(
                    .invalidInput,
                    "'\(type)' is written in version \(version), but the store's upcasters read that version into a newer one (\(newest)): write the newest version, or open the store with the upcasters the code was written for.")
            }
        }
    }

    /// The event in its type's newest shape: every step from its recorded type and version on,
    /// in order. An event no step reads comes back unchanged (and without a copy), and so does
    /// one whose data is not JSON, binary data (``DataFormat/binary``) above all: upcasters read
    /// JSON, and the store never parses binary data, so it passes through as recorded.
    ///
    /// Throws ``EventStoreError/Code/upcastFailed`` when a step throws.
    package func upcast(_ event: RecordedEvent) throws(EventStoreError) -> RecordedEvent {
        guard event.dataFormat == .json, typeFilter & Self.bit(of: event.type) != 0,
            var step = steps[StepKey(type: event.type, version: event.schemaVersion)]
        else { return event }
        // Data that is not JSON (a hand-appended event, say) cannot be upcast by any step: it
        // reads as stored, its recorded version saying so, and typed readers pass it over as
        // they pass over any event they cannot decode.
        guard var value = event.data.isEmpty ? JSONValue.null : try? JSONValue(parsing: [UInt8](event.data)) else { return event }
        var type = event.type
        var version = event.schemaVersion
        while true {
            do {
                value = try step.transform(value)
            } catch {
                throw EventStoreError(
                    .upcastFailed,
                    "The upcaster of \(type) from version \(version) failed on the event at position \(event.position) ('\(event.stream)'): \(error).",
                    position: event.position)
            }
            type = step.resultType
            // Never overflows: a step's version is below UInt16.max (checked at init).
            version += 1
            guard let next = steps[StepKey(type: type, version: version)] else { break }
            step = next
        }
        return RecordedEvent(
            position: event.position, stream: event.stream, version: event.version, id: event.id, type: type,
            data: Data(value.serialized.utf8), metadata: event.metadata, recordedAtMicroseconds: event.recordedAtMicroseconds,
            schemaVersion: event.schemaVersion, personal: event.personal, tags: event.tags, dataFormat: event.dataFormat)
    }

    /// The event upcast, or nil when a filter wants only `types` and the upcast event's type is
    /// not among them (it was read because its recorded name is an older name of a wanted type).
    package func upcast(_ event: RecordedEvent, wanting types: Set<String>?) throws(EventStoreError) -> RecordedEvent? {
        let result = try upcast(event)
        if renames, let types, !types.contains(result.type) { return nil }
        return result
    }

    /// Each event upcast, without those a filter by `types` does not want after upcasting.
    package func upcast(_ events: [RecordedEvent], wanting types: Set<String>? = nil) throws(EventStoreError) -> [RecordedEvent] {
        // Most pages hold no event a step reads: they are given back as they are, not copied.
        guard !steps.isEmpty, (renames && types != nil) || events.contains(where: needsStep) else { return events }
        var result: [RecordedEvent] = []
        result.reserveCapacity(events.count)
        for event in events {
            if let upcast = try upcast(event, wanting: types) { result.append(upcast) }
        }
        return result
    }

    /// The filter's bit for a type name: of its length, first and last bytes, all read in
    /// constant time from a native string.
    @inline(__always)
    private static func bit(of type: String) -> UInt64 {
        let utf8 = type.utf8
        return bit(count: utf8.count, first: utf8.first, last: utf8.last)
    }

    @inline(__always)
    private static func bit(count: Int, first: UInt8?, last: UInt8?) -> UInt64 {
        let mixed = count &* 31 &+ Int(first ?? 0) &* 7 &+ Int(last ?? 0)
        return 1 << UInt64(mixed & 63)
    }

    /// Whether a step may read an event of the type whose stored name is `typeBytes` (false: it
    /// reads as stored, whatever its version): the filter's test, on the name's bytes in place,
    /// so a read in place copies only the events an upcaster may change.
    package func mayStep(typeBytes: UnsafeRawBufferPointer) -> Bool {
        guard !steps.isEmpty else { return false }
        return typeFilter & Self.bit(count: typeBytes.count, first: typeBytes.first, last: typeBytes.last) != 0
    }

    /// Whether a step reads `event` as recorded.
    private func needsStep(_ event: RecordedEvent) -> Bool {
        typeFilter & Self.bit(of: event.type) != 0
            && steps[StepKey(type: event.type, version: event.schemaVersion)] != nil
    }

    /// The recorded type names that may upcast into one of `types`: the types, and every older
    /// name a step renamed into one of them. Nil stays nil (every type).
    package func recordedTypes(_ types: Set<String>?) -> Set<String>? {
        guard renames, var result = types else { return types }
        var changed = true
        while changed {
            changed = false
            for step in steps.values where step.renamedTo.map(result.contains) == true && !result.contains(step.type) {
                result.insert(step.type)
                changed = true
            }
        }
        return result
    }

    /// The filter a backend applies to stored records: its types widened by ``recordedTypes(_:)``.
    package func recordedFilter(_ filter: EventFilter) -> EventFilter {
        guard renames, filter.types != nil else { return filter }
        var widened = filter
        widened.types = recordedTypes(filter.types)
        return widened
    }

    /// A fingerprint of every step that reads a type which upcasts into one of `types` (all
    /// steps when nil): 0 when there is none, so that a projection whose types never evolved
    /// keeps its stored state. A new step, a rename or a new revision changes it.
    package func fingerprint(consuming types: Set<String>?) -> UInt64 {
        let names = recordedTypes(types)
        let identities = steps.values.filter { step in names.map { $0.contains(step.type) } ?? true }.map(\.identity).sorted()
        guard !identities.isEmpty else { return 0 }
        // FNV-1a, 64 bits: stable across runs and platforms, unlike Hasher.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in identities.joined(separator: "\n").utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash == 0 ? 1 : hash
    }
}

extension StoreConfiguration {
    /// Checks that ``upcasters`` bring every older event of each type to the version the code
    /// reads (`versions`: type name → schema version, as ``EventData/schemaVersion`` declares
    /// it): for a program's typed layer to call when it starts, so that a store opened without
    /// the steps fails at once rather than read an old shape later.
    ///
    /// Throws ``EventStoreError/Code/invalidInput`` naming the first type they do not reach, or
    /// the chains' own problem (as opening a store with them would).
    public func checkUpcasters(reaching versions: [String: UInt16]) throws(EventStoreError) {
        try Upcasting(upcasters).check(reaching: versions)
    }
}
