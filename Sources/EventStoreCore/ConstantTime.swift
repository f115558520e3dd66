/// Comparison that takes the same time wherever the texts differ: for secrets (the faces' tokens
/// and API keys), so that the time of a refusal does not tell how much of a guess was right.
package enum ConstantTime {
    package static func equal(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        var difference = UInt8(truncatingIfNeeded: x.count ^ y.count)
        for index in 0..<max(x.count, y.count) {
            let left = index < x.count ? x[index] : 0
            let right = index < y.count ? y[index] : 0
            difference |= left ^ right
        }
        return difference == 0 && x.count == y.count
    }
}
