import Foundation
import Testing
import TestSupport

/// esctl verify and backup through the built binary: what a user sees.
@Suite("esctl verify and backup")
struct EsctlVerifyBackupTests {
    let sandbox: EsctlSandbox

    init() throws {
        sandbox = try EsctlSandbox(prefix: "esctl-verify")
    }

    @Test("verify, backup and export of a path with no store exit 67 and create nothing")
    func missingStore() async throws {
        let typo = sandbox.directory.appending("typo")
        for arguments in [["verify"], ["verify", "--json"], ["backup", sandbox.directory.appending("copy")], ["export"]] {
            let output = try await ProcessRunner.esctl(arguments, db: typo)
            #expect(output.status == 67, "\(arguments): \(output)")
            #expect(output.stderr == "esctl: There is no store at '\(typo)'; check --db (or $ESCTL_DB), or create one with `esctl init`.\n", "\(arguments)")
        }
        #expect(!FileManager.default.fileExists(atPath: typo))
        #expect(!FileManager.default.fileExists(atPath: sandbox.directory.appending("copy")))

        // An existing directory without a store, empty or not, is no store either, and stays as it was.
        let empty = sandbox.directory.appending("empty")
        let other = sandbox.directory.appending("other")
        for directory in [empty, other] { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false) }
        _ = FileManager.default.createFile(atPath: other + "/notes.txt", contents: Data("keep".utf8))
        for (directory, listing) in [(empty, [String]()), (other, ["notes.txt"])] {
            for arguments in [["verify"], ["backup", sandbox.directory.appending("copy")], ["export"]] {
                let output = try await ProcessRunner.esctl(arguments, db: directory)
                #expect(output.status == 67, "\(arguments) in \(directory): \(output)")
                #expect(output.stderr.contains("There is no store at"), "\(arguments)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == listing)
        }

        // A file where the store should be is not "no store": opening says what it is (69).
        let file = sandbox.directory.appending("a-file")
        _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        let onFile = try await ProcessRunner.esctl(["verify"], db: file)
        #expect(onFile.status == 69 && onFile.stderr.contains("is a file"), "\(onFile)")
    }

    @Test("verify says ok with the counts, as text and as JSON")
    func verifyClean() async throws {
        #expect(try await sandbox.esctl("append", "s", "T", "--data", #"{"a":1}"#).status == 0)
        #expect(try await sandbox.esctl("camp", "add-site", "15").status == 0)
        #expect(try await sandbox.esctl("query", "campsites").status == 0)
        let text = try await sandbox.esctl("verify", "--deep")
        #expect(text.status == 0)
        #expect(text.stdout == "ok: 2 events in 2 streams, head 2; checksums, indexes, ids and projections agree\n", "\(text)")
        let json = try await sandbox.esctl("verify", "--json")
        #expect(json.stdout == #"{"ok":true,"events":2,"streams":2,"headPosition":2,"uncheckedRecords":0,"problems":[],"omittedProblems":0}"# + "\n", "\(json)")
    }

    @Test("a backup is private, verified, and refuses a destination it cannot use")
    func backup() async throws {
        for n in 1...5 { #expect(try await sandbox.esctl("append", "s-\(n % 2)", "T", "--data", "{\"n\":\(n)}").status == 0) }
        let copy = sandbox.directory.appending("copy")

        // Given a store, when it is backed up, then the copy is the owner's only, verifies clean,
        // and reads like the store.
        let output = try await sandbox.esctl("backup", copy, "--compact")
        #expect(output.status == 0)
        #expect(output.stdout.hasSuffix("to \(copy) (through position 5); the copy verifies clean\n"), "\(output)")
        let attributes = try FileManager.default.attributesOfItem(atPath: copy + "/data.mdb")
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(try await ProcessRunner.esctl(["export"], db: copy).stdout == (try await sandbox.esctl("export").stdout))

        // A destination that is not empty, or whose parent is missing, is a wrong argument: 64, nothing copied.
        let occupied = try await sandbox.esctl("backup", copy)
        #expect(occupied.status == 64 && occupied.stderr.contains("exists and is not an empty directory"), "\(occupied)")
        let orphan = sandbox.directory.appending("no/such/parent")
        let missingParent = try await sandbox.esctl("backup", orphan)
        #expect(missingParent.status == 64 && missingParent.stderr.contains("is not in an existing directory"), "\(missingParent)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.directory.appending("no")))
    }

    @Test("a backup of a damaged store says so and exits 69; --no-verify copies without looking")
    func backupOfDamagedStore() async throws {
        #expect(try await sandbox.esctl("append", "s", "T", "--data", #"{"marker":"MARKERMARKERMARKER"}"#).status == 0)
        // Break the record's format byte in place (it sits 6 bytes before the stream name).
        let path = sandbox.db + "/data.mdb"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let marker = try #require(bytes.range(of: Data("MARKERMARKERMARKER".utf8)))
        let header = try #require(bytes[..<marker.lowerBound].lastRange(of: Data([2, 0, 0, 1, 0, 1])))
        bytes[header.lowerBound] = 0x7F
        try bytes.write(to: URL(fileURLWithPath: path))

        let checked = try await sandbox.esctl("backup", sandbox.directory.appending("checked"))
        #expect(checked.status == 69, "\(checked)")
        #expect(checked.stdout.hasPrefix("problem: records: position 1 does not decode"), "\(checked.stdout)")
        #expect(checked.stderr.contains("has 1 problem (see the report above); it is kept, but run `esctl verify` on the store"), "\(checked.stderr)")
        #expect(FileManager.default.fileExists(atPath: sandbox.directory.appending("checked/data.mdb")))

        let unchecked = try await sandbox.esctl("backup", sandbox.directory.appending("unchecked"), "--no-verify")
        #expect(unchecked.status == 0)
        #expect(unchecked.stdout.hasSuffix("(at least through position 1); not verified\n"), "\(unchecked)")
    }
}
