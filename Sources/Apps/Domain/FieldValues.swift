import EventStoreCore

/// The values of named members of a JSON object, read in place as a synthesized
/// `Decodable` finds them: the first member of each name counts, others are ignored. A key
/// written with escapes makes the object one for `Decodable` to read (`read` returns false).
struct FieldValues {
    private let names: [StaticString]
    /// Each name's value, as bytes in the data being read (valid only while it is).
    private var values: [UnsafeRawBufferPointer?]

    init(_ names: [StaticString]) {
        self.names = names
        values = Array(repeating: nil, count: names.count)
    }

    /// Reads the object `data` holds; false when it is not one valid JSON object, or has a key
    /// with escapes.
    mutating func read(_ data: UnsafeRawBufferPointer) -> Bool {
        var plain = true
        let names = self.names
        var found = values
        let valid = JSONFields.forEachMember(ofObject: data) { key, value in
            guard plain else { return }
            if JSONFields.keyHasEscapes(key) {
                plain = false
                return
            }
            for index in names.indices where found[index] == nil {
                let name = UnsafeRawBufferPointer(start: names[index].utf8Start, count: names[index].utf8CodeUnitCount)
                if key.elementsEqual(name) {
                    found[index] = value
                    break
                }
            }
        }
        values = found
        return valid && plain
    }

    /// Whether the `index`th name is missing or `null` (what an optional decodes as nil).
    func isMissingOrNull(_ index: Int) -> Bool { values[index].map(JSONFields.isNull) ?? true }
    /// The `index`th name's value as a whole number; nil when missing or not one.
    func integer(_ index: Int) -> Int? { values[index].flatMap { JSONFields.integer($0, as: Int.self) } }
    /// The `index`th name's value as a finite number; nil when missing or not one.
    func double(_ index: Int) -> Double? { values[index].flatMap(JSONFields.double) }
    /// The `index`th name's value as a string; nil when missing or not one.
    func string(_ index: Int) -> String? { values[index].flatMap(JSONFields.string) }
    /// The `index`th name's value as a boolean; nil when missing or not one.
    func bool(_ index: Int) -> Bool? { values[index].flatMap(JSONFields.bool) }
    /// The `index`th name's value as it stands in the data (an object to read with a
    /// `FieldValues` of its own); nil when missing.
    func raw(_ index: Int) -> UnsafeRawBufferPointer? { values[index] }
}
