import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The commands that read never create or change a store; a store the user may not write can
/// still be read.
@Suite("esctl reading without writing")
struct EsctlReadOnlyTests {
    let sandbox: EsctlSandbox

    init() throws {
        sandbox = try EsctlSandbox(prefix: "esctl-readonly")
    }

    static let readingCommands: [[String]] = [
        ["read", "s"], ["replay"], ["subscribe", "--count", "1", "--timeout", "0.2"], ["stats"], ["export"], ["verify"],
        ["backup", "/nonexistent-parent/copy"], ["query", "app-state"], ["projections"], ["rebuild", "--all"],
    ]

    @Test("every reading command on a path without a store exits 67, names the path, points to init, and creates nothing")
    func missingPathCreatesNothing() async throws {
        let missing = sandbox.directory.appending("typo")
        let empty = sandbox.directory.appending("empty")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
        let listing = try FileManager.default.contentsOfDirectory(atPath: sandbox.directory.path).sorted()
        for path in [missing, empty] {
            for arguments in Self.readingCommands {
                let output = try await ProcessRunner.esctl(arguments, db: path)
                #expect(output.status == 67, "\(arguments): \(output)")
                #expect(output.stderr == "esctl: There is no store at '\(path)'; check --db (or $ESCTL_DB), or create one with `esctl init`.\n", "\(arguments)")
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.directory.path).sorted() == listing)
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty).isEmpty)
    }

    @Test("init creates an empty store once, and says so; the reading commands then work")
    func initCreates() async throws {
        let first = try await sandbox.esctl("init")
        #expect(first.status == 0 && first.stdout == "created an empty store at \(sandbox.db)\n")
        let again = try await sandbox.esctl("init")
        #expect(again.status == 0 && again.stdout == "a store is already at \(sandbox.db); nothing changed\n")
        for arguments in [["replay"], ["stats"], ["export"], ["verify"], ["projections"]] {
            let output = try await sandbox.esctl(arguments)
            #expect(output.status == 0, "\(arguments): \(output)")
        }
    }

    @Test("verify, export and backup leave the data file byte for byte as it was")
    func readersLeaveTheFileAlone() async throws {
        #expect(try await sandbox.esctl("append", "s", "T", "--data", #"{"n":1}"#).status == 0)
        let dataFile = sandbox.db + "/data.mdb"
        let before = try Data(contentsOf: URL(fileURLWithPath: dataFile))
        #expect(try await sandbox.esctl("verify", "--deep").status == 0)
        #expect(try await sandbox.esctl("export").status == 0)
        #expect(try await sandbox.esctl("backup", sandbox.directory.appending("copy")).status == 0)
        #expect(try await sandbox.esctl("read", "s").status == 0)
        #expect(try await sandbox.esctl("stats").status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dataFile)) == before)
    }

    @Test("as-of beyond the head is an error naming the head")
    func asOfBeyondHead() async throws {
        #expect(try await sandbox.esctl("append", "s", "T").status == 0)
        let output = try await sandbox.esctl("query", "count-by-type", "--as-of", "5")
        #expect(output.status == 64)
        #expect(output.stderr == "esctl: Position 5 is beyond the head of the log (1); give a position up to 1.\n")
    }

    /// Runs esctl as an unprivileged user (root ignores permissions).
    func esctlAsNobody(_ arguments: [String]) async throws -> ProcessOutput {
        let full = arguments + ["--db", sandbox.db]
        if getuid() == 0 {
            return try await ProcessRunner.run(
                URL(fileURLWithPath: "/usr/bin/setpriv"),
                ["--reuid=65534", "--regid=65534", "--clear-groups", ProcessRunner.esctl.path] + full)
        }
        return try await ProcessRunner.run(ProcessRunner.esctl, full)
    }

    @Test("a store the user may read but not write is read by the reading commands; the writing ones say it is read-only")
    func readOnlyStore() async throws {
        // Given a store whose files and directory are readable by all and writable by none
        #expect(try await sandbox.esctl("append", "s", "T", "--data", #"{"n":1}"#).status == 0)
        #expect(try await sandbox.esctl("append", "s", "U").status == 0)
        let export = try await sandbox.esctl("export").stdout
        chmod(sandbox.directory.path, 0o755)
        for file in ["data.mdb", "lock.mdb"] { chmod(sandbox.db + "/" + file, 0o444) }
        chmod(sandbox.db, 0o555)
        defer {
            chmod(sandbox.db, 0o700)
            for file in ["data.mdb", "lock.mdb"] { chmod(sandbox.db + "/" + file, 0o600) }
        }
        // When another user reads it, then the reading commands work
        #expect(try await esctlAsNobody(["export"]).stdout == export)
        for arguments in [
            ["read", "s"], ["replay"], ["stats"], ["verify"], ["subscribe", "--from-start", "--count", "2"], ["query", "count-by-type", "--as-of", "2"],
            ["tracking", "mailer"], ["projections"],
        ] {
            let output = try await esctlAsNobody(arguments)
            #expect(output.status == 0, "\(arguments): \(output)")
        }
        // And the writing commands refuse in one sentence
        let append = try await esctlAsNobody(["append", "s", "T"])
        #expect(append.status == 69)
        #expect(
            append.stderr
                == "esctl: The store at '\(sandbox.db)' is read-only for this user; it can be read (esctl read, replay, export), not written. (errno 13: Permission denied)\n")
    }
}
