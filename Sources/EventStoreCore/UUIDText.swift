import Foundation

extension UUID {
    /// The id as `export`, `read --json` and RFC 9562 write it: lower-case hex, so a message's id
    /// can be found in those outputs as it is.
    package var lowercasedString: String { uuidString.lowercased() }
}
