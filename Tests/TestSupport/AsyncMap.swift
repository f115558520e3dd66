extension Sequence {
    /// The elements transformed in order, one at a time (`map` for an async transform).
    public func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
