/// The command snapshots' table as far as the store knows it (the Commands module writes it):
/// its name, here; each backend removes the rows a deletion takes with it.
package enum SnapshotRows {
    package static let table = "$snapshots"
}
