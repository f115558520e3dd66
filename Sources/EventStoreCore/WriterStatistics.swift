import Foundation

/// How much the writer has done since the store opened.
public struct WriterStatistics: Sendable, Equatable {
    /// Write transactions committed.
    public let commits: UInt64
    /// Appends and other writes completed successfully.
    public let completedWrites: UInt64

    package init(commits: UInt64, completedWrites: UInt64) {
        self.commits = commits
        self.completedWrites = completedWrites
    }
}
