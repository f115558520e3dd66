import Foundation

/// Appends the store itself makes to its own streams (`$forgotten`), which callers may not.
package enum SystemWrites {
    @TaskLocal package static var isActive = false
    /// Set around the table write that makes subjects' keys: it records no event, and the
    /// writer then does not read the store's clock for it, so the clock a caller's events get
    /// is the same whether or not a key was made first.
    @TaskLocal package static var leavesClockAlone = false
    /// Set around the store's own read of a recorded event's stored bytes: read paths leave
    /// personal data sealed.
    @TaskLocal package static var readsSealed = false
}

extension EventLog {
    /// `appends` with every event's personal data sealed under its subjects' keys (made for
    /// subjects that have none, in a table write of their own before the append: a key no
    /// event uses is harmless). Events that mark nothing pass unchanged; their data may not
    /// look like an envelope. Events with personal data get their id here when they have none
    /// (sealing binds the data to it).
    ///
    /// Throws ``EventStoreError/Code/invalidInput`` for a bad subject, field or mark, and the
    /// store's errors.
    package func sealingPersonalData(_ appends: [StreamAppend]) async throws -> [StreamAppend] {
        var subjects = Set<String>()
        var types = Set<String>()
        for append in appends {
            for event in append.events {
                if event.personal.isEmpty {
                    if PersonalEnvelope.looksSealed(event.data) {
                        throw EventStoreError(
                            .invalidInput,
                            "An event's data starts with {\"$personal\": which the store keeps for sealed personal data; send the data itself and mark what is personal (esctl append --personal, a line's \"personal\", NewEvent.personal).")
                    }
                    continue
                }
                try Self.validate(event.personal)
                types.insert(event.type)
                for part in event.personal where !part.isForgotten { subjects.insert(part.subject) }
            }
        }
        guard !types.isEmpty else { return appends }
        try await openTables([SubjectKeys.table])
        let wanted = subjects.sorted()
        let noted = types.sorted()
        var keys = try await readTables { txn -> [String: SubjectKey]? in
            var keys: [String: SubjectKey] = [:]
            for subject in wanted {
                guard let key = try await SubjectKeys.key(of: subject, in: txn) else { return nil }
                keys[subject] = key
            }
            for type in noted where try await !SubjectKeys.hasPersonalData(type: type, in: txn) { return nil }
            return keys
        }
        if keys == nil {
            keys = try await SystemWrites.$leavesClockAlone.withValue(true) {
                try await writeTables { txn in
                var keys: [String: SubjectKey] = [:]
                for subject in wanted { keys[subject] = try await SubjectKeys.keyCreating(of: subject, in: txn) }
                for type in noted { try await SubjectKeys.notePersonalType(type, in: txn) }
                return keys
                }
            }
        }
        // A retry (a given id) of an event recorded before one of its subjects was forgotten
        // cannot seal to the bytes recorded (that key is gone): it is compared in what is left.
        let forgottenBefore = try await readTables { txn in
            var forgotten = Set<String>()
            for subject in wanted where try await SubjectKeys.wasForgotten(subject, in: txn) { forgotten.insert(subject) }
            return forgotten
        }
        let generator = configuration.idGenerator
        var sealed = appends
        for part in sealed.indices {
            for index in sealed[part].events.indices where !sealed[part].events[index].personal.isEmpty {
                var event = sealed[part].events[index]
                let given = event.id
                let id = given ?? generator()
                event.id = id
                if given != nil, event.personal.contains(where: { forgottenBefore.contains($0.subject) }),
                    let recorded = try await recordedAsForgotten(event, id: id, stream: sealed[part].stream, keys: keys ?? [:])
                {
                    event.data = recorded
                } else {
                    event.data = try PersonalEnvelope.seal(StoredForm.of(event.data), parts: event.personal, id: id, keys: keys ?? [:])
                }
                event.personal = []
                sealed[part].events[index] = event
            }
        }
        try Limits.validate(sealed)
        return sealed
    }

    /// The stored bytes of the event recorded under `id`, when `event` is a retry of it as far
    /// as can still be told: same stream, type, schema version, metadata and marks, and the same
    /// data once the parts forgotten since are masked in it. (What a forgotten part held cannot
    /// be compared any more: a retry that differs only there is answered as recorded.)
    private func recordedAsForgotten(_ event: NewEvent, id: UUID, stream: String, keys: [String: SubjectKey]) async throws -> Data? {
        guard let stored = try await SystemWrites.$readsSealed.withValue(true, operation: { try await self.event(withID: id) }),
            stored.stream == stream, stored.type == event.type, stored.schemaVersion == event.schemaVersion,
            stored.metadata == StoredForm.of(event.metadata), PersonalEnvelope.isSealed(stored.data)
        else { return nil }
        let opened = PersonalEnvelope.open(stored.data, id: id) { keys[$0] }
        guard opened.personal.map({ PersonalData(subject: $0.subject, fields: $0.fields) }) == event.personal.map({ PersonalData(subject: $0.subject, fields: $0.fields) }),
            let masked = PersonalEnvelope.masked(StoredForm.of(event.data), forgotten: opened.personal.filter(\.isForgotten)),
            masked == opened.data
        else { return nil }
        return stored.data
    }

    private static func validate(_ parts: [PersonalData]) throws(EventStoreError) {
        if parts.count > PersonalData.maximumPartsPerEvent {
            throw EventStoreError(
                .invalidInput, "An event marks \(parts.count) parts personal; mark at most \(PersonalData.maximumPartsPerEvent).")
        }
        for part in parts {
            try Limits.validateName(part.subject, kind: "subject")
            if let fields = part.fields {
                if fields.isEmpty {
                    throw EventStoreError(.invalidInput, "A personal mark for '\(part.subject)' names an empty list of fields; name fields, or give fields null for the whole payload.")
                }
                for field in fields where field.isEmpty {
                    throw EventStoreError(.invalidInput, "A personal mark for '\(part.subject)' names an empty field.")
                }
            }
        }
    }

    /// The event as readers see it: personal data decrypted, or marked forgotten.
    package func opened(_ event: RecordedEvent, in txn: TableTransaction) async throws -> RecordedEvent {
        try await txn.opened(event)
    }
}

extension RecordedEvent {
    /// The same event with its data opened and its parts marked.
    package func opened(_ opened: (data: Data, personal: [PersonalData])) -> RecordedEvent {
        RecordedEvent(
            position: position, stream: stream, version: version, id: id, type: type, data: opened.data, metadata: metadata,
            recordedAtMicroseconds: recordedAtMicroseconds, schemaVersion: schemaVersion, personal: opened.personal, tags: tags,
            dataFormat: dataFormat)
    }
}
