/// Encodes `Encodable` values as ``JSONValue`` trees, members in the order the value encodes them
/// (for synthesized conformances, the order the properties are declared), so the same value
/// always gives the same JSON text. A nil optional is written as `null`, not left out.
///
/// Numbers: integers exactly; doubles in their shortest exact text (`JSONWriter.number(_:)`),
/// an integral double as an integer (`12`, not `12.0`). Infinities and NaN, which JSON cannot
/// hold, throw.
public enum JSONValueEncoder {
    /// The value as a JSON tree. Throws `EncodingError` for a non-finite number.
    public static func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        let root = Node()
        try value.encode(to: TreeEncoder(node: root, path: []))
        return root.value
    }

    /// The value as compact JSON text.
    public static func serialize<T: Encodable>(_ value: T) throws -> String {
        try encode(value).serialized
    }
}

/// A value being built: filled in as containers are asked for and written to.
private final class Node {
    enum Content {
        case empty
        case scalar(JSONValue)
        case object([(String, Node)])
        case array([Node])
    }

    var content = Content.empty

    var value: JSONValue {
        switch content {
        case .empty: return .object([])
        case let .scalar(value): return value
        case let .object(members): return .object(members.map { ($0.0, $0.1.value) })
        case let .array(elements): return .array(elements.map(\.value))
        }
    }

    /// The member named `key` of an object node (made an object if it is empty), created empty.
    func member(_ key: String) -> Node {
        let child = Node()
        if case var .object(members) = content {
            if let index = members.firstIndex(where: { $0.0 == key }) {
                members[index].1 = child
            } else {
                members.append((key, child))
            }
            content = .object(members)
        } else {
            content = .object([(key, child)])
        }
        return child
    }

    /// A new element at the end of an array node (made an array if it is empty).
    func element() -> Node {
        let child = Node()
        if case var .array(elements) = content {
            elements.append(child)
            content = .array(elements)
        } else {
            content = .array([child])
        }
        return child
    }

    func becomeObject() {
        if case .object = content { return }
        content = .object([])
    }

    func becomeArray() {
        if case .array = content { return }
        content = .array([])
    }
}

private struct TreeEncoder: Encoder {
    let node: Node
    let path: [any CodingKey]

    var codingPath: [any CodingKey] { path }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.becomeObject()
        return KeyedEncodingContainer(ObjectEncoder<Key>(node: node, path: path))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.becomeArray()
        return ArrayEncoder(node: node, path: path)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        ScalarEncoder(node: node, path: path)
    }
}

/// Turns primitives into JSON scalars.
private enum Scalars {
    static func double(_ value: Double, _ path: [any CodingKey]) throws -> JSONValue {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: path, debugDescription: "JSON cannot hold \(value)."))
        }
        return .double(value)
    }

    static func integer<T: BinaryInteger>(_ value: T) -> JSONValue {
        if let exact = Int64(exactly: value) { return .int(exact) }
        return .double(Double(value))
    }
}

private struct ObjectEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: Node
    let path: [any CodingKey]
    var codingPath: [any CodingKey] { path }

    private func set(_ value: JSONValue, _ key: Key) { node.member(key.stringValue).content = .scalar(value) }

    mutating func encodeNil(forKey key: Key) throws { set(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { set(try Scalars.double(value, path + [key]), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { set(try Scalars.double(Double(value), path + [key]), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(Scalars.integer(value), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(Scalars.integer(value), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(Scalars.integer(value), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(Scalars.integer(value), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(Scalars.integer(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { set(Scalars.integer(value), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(Scalars.integer(value), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(Scalars.integer(value), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(Scalars.integer(value), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { set(Scalars.integer(value), key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try value.encode(to: TreeEncoder(node: node.member(key.stringValue), path: path + [key]))
    }

    // A nil optional is written as null (synthesized conformances would leave the key out).
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws { try encodeOptional(value, key) }

    private mutating func encodeOptional<T: Encodable>(_ value: T?, _ key: Key) throws {
        guard let value else { return set(.null, key) }
        try encode(value, forKey: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let child = node.member(key.stringValue)
        child.becomeObject()
        return KeyedEncodingContainer(ObjectEncoder<NestedKey>(node: child, path: path + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = node.member(key.stringValue)
        child.becomeArray()
        return ArrayEncoder(node: child, path: path + [key])
    }

    mutating func superEncoder() -> any Encoder { TreeEncoder(node: node.member("super"), path: path) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { TreeEncoder(node: node.member(key.stringValue), path: path + [key]) }
}

private struct ArrayEncoder: UnkeyedEncodingContainer {
    let node: Node
    let path: [any CodingKey]
    var codingPath: [any CodingKey] { path }
    var count: Int {
        if case let .array(elements) = node.content { return elements.count }
        return 0
    }

    private func append(_ value: JSONValue) { node.element().content = .scalar(value) }

    mutating func encodeNil() throws { append(.null) }
    mutating func encode(_ value: Bool) throws { append(.bool(value)) }
    mutating func encode(_ value: String) throws { append(.string(value)) }
    mutating func encode(_ value: Double) throws { append(try Scalars.double(value, path)) }
    mutating func encode(_ value: Float) throws { append(try Scalars.double(Double(value), path)) }
    mutating func encode(_ value: Int) throws { append(Scalars.integer(value)) }
    mutating func encode(_ value: Int64) throws { append(Scalars.integer(value)) }
    mutating func encode(_ value: UInt64) throws { append(Scalars.integer(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try value.encode(to: TreeEncoder(node: node.element(), path: path))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let child = node.element()
        child.becomeObject()
        return KeyedEncodingContainer(ObjectEncoder<NestedKey>(node: child, path: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let child = node.element()
        child.becomeArray()
        return ArrayEncoder(node: child, path: path)
    }

    mutating func superEncoder() -> any Encoder { TreeEncoder(node: node.element(), path: path) }
}

private struct ScalarEncoder: SingleValueEncodingContainer {
    let node: Node
    let path: [any CodingKey]
    var codingPath: [any CodingKey] { path }

    private func set(_ value: JSONValue) { node.content = .scalar(value) }

    mutating func encodeNil() throws { set(.null) }
    mutating func encode(_ value: Bool) throws { set(.bool(value)) }
    mutating func encode(_ value: String) throws { set(.string(value)) }
    mutating func encode(_ value: Double) throws { set(try Scalars.double(value, path)) }
    mutating func encode(_ value: Float) throws { set(try Scalars.double(Double(value), path)) }
    mutating func encode(_ value: Int) throws { set(Scalars.integer(value)) }
    mutating func encode(_ value: Int8) throws { set(Scalars.integer(value)) }
    mutating func encode(_ value: Int16) throws { set(Scalars.integer(value)) }
    mutating func encode(_ value: Int32) throws { set(Scalars.integer(value)) }
    mutating func encode(_ value: Int64) throws { set(Scalars.integer(value)) }
    mutating func encode(_ value: UInt) throws { set(Scalars.integer(value)) }
    mutating func encode(_ value: UInt8) throws { set(Scalars.integer(value)) }
    mutating func encode(_ value: UInt16) throws { set(Scalars.integer(value)) }
    mutating func encode(_ value: UInt32) throws { set(Scalars.integer(value)) }
    mutating func encode(_ value: UInt64) throws { set(Scalars.integer(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try value.encode(to: TreeEncoder(node: node, path: path))
    }
}
