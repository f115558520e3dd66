import EventStore
import Foundation
import Testing
import TestSupport

/// Every row of RELIABILITY.md's bad-input table: a clear error, a non-zero exit, and nothing in
/// the store changed (verify and export before and after).
@Suite("Bad input")
struct BadInputTests {
    let directory: TemporaryDirectory
    var db: String { directory.appending("store") }

    init() throws {
        directory = try TemporaryDirectory(prefix: "bad-input")
    }

    func esctl(_ arguments: [String], db: String? = nil, stdin: Data? = nil) async throws -> ProcessOutput {
        try await ProcessRunner.esctl(arguments, db: db ?? self.db, stdin: stdin)
    }

    /// A store with a few events and a projection caught up.
    func seed() async throws {
        #expect(try await esctl(["append", "s", "T", "--data", #"{"n":1}"#]).status == 0)
        #expect(try await esctl(["camp", "add-site", "15"]).status == 0)
        #expect(try await esctl(["query", "campsites"]).status == 0)
    }

    /// Runs a bad command and checks: the exit code, one sentence on standard error, and the
    /// store exactly as it was, verifying clean.
    func expectRejected(_ arguments: [String], stdin: Data? = nil, status: Int32, mentioning text: String? = nil) async throws {
        let before = try await esctl(["export"]).stdout
        let output = try await esctl(arguments, stdin: stdin)
        #expect(output.status == status, "\(arguments): \(output)")
        let lines = output.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("esctl: "), "\(arguments): one sentence expected, got \(output.stderr)")
        if let text { #expect(output.stderr.contains(text), "\(arguments): \(output.stderr)") }
        #expect(try await esctl(["export"]).stdout == before, "\(arguments) changed the store")
        let verify = try await esctl(["verify", "--deep"])
        #expect(verify.status == 0, "\(arguments): \(verify)")
    }

    @Test("malformed JSON, non-UTF-8 bytes, bad names, oversized events and appends, bad numbers and dates")
    func badEventsAndArguments() async throws {
        try await seed()
        let bigFile = directory.appending("big.json")
        try Data(("\"" + String(repeating: "x", count: 17 << 20) + "\"").utf8).write(to: URL(fileURLWithPath: bigFile))
        let notUTF8 = directory.appending("not-utf8.json")
        try Data([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xFF, 0xFE, 0x22, 0x7D]).write(to: URL(fileURLWithPath: notUTF8))
        let line = #"{"stream":"s","type":"T","data":{}}"#
        let tooMany = Data(Array(repeating: line, count: 10_001).joined(separator: "\n").utf8)

        try await expectRejected(["append", "s", "T", "--data", #"{"n":"#], status: 64, mentioning: "not valid JSON")
        try await expectRejected(["append", "--batch", "-"], stdin: Data("\(line)\n{\"stream\":\"s\"\n".utf8), status: 64, mentioning: "Line 2")
        try await expectRejected(["append", "s", "T", "--data", "@" + notUTF8], status: 64, mentioning: "not valid JSON")
        try await expectRejected(["append", "", "T"], status: 64, mentioning: "empty")
        try await expectRejected(["append", String(repeating: "é", count: 150), "T"], status: 64, mentioning: "300 bytes")
        try await expectRejected(["append", "a\tb", "T"], status: 64, mentioning: "control character")
        try await expectRejected(["append", "s", "T\u{7}"], status: 64, mentioning: "control character")
        try await expectRejected(["append", "s", "T", "--data", "@" + bigFile], status: 64, mentioning: "16 MiB")
        try await expectRejected(["append", "--batch", "-"], stdin: tooMany, status: 64, mentioning: "more than 10000 events")
        try await expectRejected(["query", "no-such-projection"], status: 67, mentioning: "the projections are")
        try await expectRejected(["fitness", "walk", "--steps", "-5", "--user", "u"], status: 64, mentioning: "0 or more")
        try await expectRejected(["fitness", "goal", "99999999999999999999999", "--user", "u"], status: 64, mentioning: "The goal takes a whole number; '99999999999999999999999' is not one")
        try await expectRejected(["fitness", "goal", "-5", "--user", "u"], status: 64, mentioning: "The goal must be a positive number of steps, at most 10000000.")
        try await expectRejected(["camp", "add-site", "--", "-3"], status: 64, mentioning: "not a positive number")
        try await expectRejected(["camp", "add-site", "-3"], status: 64, mentioning: "not a positive number")
        try await expectRejected(["replay", "--from", "-1"], status: 64, mentioning: "--from takes a whole number of 0 or more; '-1' is not one.")
        try await expectRejected(["camp", "reserve", "--site", "15", "--camper", "C1", "--date", "2026-01-01", "--nights", "9223372036854775807"], status: 64, mentioning: "out of range")
        try await expectRejected(["read", "s", "--limit=-1"], status: 64, mentioning: "--limit takes a whole number of 0 or more")
        try await expectRejected(["camp", "reserve", "--site", "15", "--camper", "C1", "--date", "2026-02-30", "--nights", "1"], status: 64, mentioning: "not a date")
    }

    @Test("an argument that is not UTF-8 is refused before anything runs")
    func nonUTF8Argument() async throws {
        try await seed()
        // Process arguments are C strings: build one with a byte that is not UTF-8 through a shell.
        let before = try await esctl(["export"]).stdout
        let output = try await ProcessRunner.run(
            URL(fileURLWithPath: "/bin/sh"), ["-c", "exec \"$0\" append \"$(printf 'bad\\377name')\" T --db \"$1\"", ProcessRunner.esctl.path, db])
        #expect(output.status == 64)
        #expect(output.stderr.contains("not valid UTF-8"))
        #expect(try await esctl(["export"]).stdout == before)
    }

    @Test("store paths that cannot hold a store: a file, no permission, other files, not LMDB")
    func badStorePaths() async throws {
        let file = directory.appending("file")
        _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        let asFile = try await esctl(["stats"], db: file)
        #expect(asFile.status == 69 && asFile.stderr.contains("is a file"))
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "x")

        let other = directory.appending("other")
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: false)
        _ = FileManager.default.createFile(atPath: other + "/notes.txt", contents: Data("keep".utf8))
        let foreign = try await esctl(["append", "s", "T"], db: other)
        #expect(foreign.status == 69 && foreign.stderr.contains("holds other files"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: other) == ["notes.txt"])

        let garbage = directory.appending("garbage")
        try FileManager.default.createDirectory(atPath: garbage, withIntermediateDirectories: false)
        _ = FileManager.default.createFile(atPath: garbage + "/data.mdb", contents: Data(repeating: 0x42, count: 32768))
        let notLMDB = try await esctl(["stats"], db: garbage)
        #expect(notLMDB.status == 69 && notLMDB.stderr.contains("not a readable LMDB environment"))
        #expect(FileManager.default.contents(atPath: garbage + "/data.mdb") == Data(repeating: 0x42, count: 32768), "opening a foreign file changed it")

        // No permission: as root, permissions are not enforced, so run esctl as nobody.
        let locked = directory.appending("locked")
        try await seedStore(locked)
        chmod(locked, 0o000)
        defer { chmod(locked, 0o700) }
        chmod(directory.path, 0o755)
        let arguments = ["stats", "--db", locked]
        let denied = getuid() == 0
            ? try await ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/setpriv"), ["--reuid=65534", "--regid=65534", "--clear-groups", ProcessRunner.esctl.path] + arguments)
            : try await ProcessRunner.run(ProcessRunner.esctl, arguments)
        #expect(denied.status == 69, "\(denied)")
        #expect(denied.stderr.contains("cannot be read") || denied.stderr.contains("Permission denied"), "\(denied.stderr)")
    }

    func seedStore(_ path: String) async throws {
        #expect(try await esctl(["append", "s", "T"], db: path).status == 0)
    }

    @Test("a truncated or corrupted data file is an error, not a crash")
    func damagedDataFiles() async throws {
        // Truncated: the file ends before the pages its meta page counts.
        let truncated = directory.appending("truncated")
        for n in 0..<50 {
            #expect(try await esctl(["append", "s-\(n)", "T", "--data", "\"\(String(repeating: "x", count: 3000))\""], db: truncated).status == 0)
        }
        let dataFile = truncated + "/data.mdb"
        let size = try #require(try FileManager.default.attributesOfItem(atPath: dataFile)[.size] as? NSNumber).intValue
        #expect(truncate(dataFile, off_t(size / 2)) == 0)
        let cut = try await esctl(["stats"], db: truncated)
        #expect(cut.status == 69 && cut.stderr.contains("truncated"), "\(cut)")
        #expect(try await esctl(["append", "s", "T"], db: truncated).status == 69)
        let sizeAfter = try #require(try FileManager.default.attributesOfItem(atPath: dataFile)[.size] as? NSNumber).intValue
        #expect(sizeAfter == size / 2, "opening a truncated file changed it")

        // Both meta pages overwritten: not a readable environment.
        let meta = directory.appending("meta")
        try await seedStore(meta)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: meta + "/data.mdb"))
        try handle.write(contentsOf: Data(repeating: 0xA5, count: 8192))
        try handle.close()
        let metaBytes = try Data(contentsOf: URL(fileURLWithPath: meta + "/data.mdb"))
        let badMeta = try await esctl(["stats"], db: meta)
        #expect(badMeta.status == 69, "\(badMeta)")
        #expect(try await esctl(["append", "s", "T"], db: meta).status == 69)
        #expect(try Data(contentsOf: URL(fileURLWithPath: meta + "/data.mdb")) == metaBytes, "a failed open wrote to the file")

        // A record's bytes overwritten in place: reads report damage and verify names it.
        let record = directory.appending("record")
        #expect(try await esctl(["append", "s", "T", "--data", #"{"marker":"MARKERMARKERMARKER"}"#], db: record).status == 0)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: record + "/data.mdb"))
        let marker = Data("MARKERMARKERMARKER".utf8)
        let found = try #require(bytes.range(of: marker))
        // The record header sits just before the stream name and type: break its format byte.
        let header = try #require(bytes[..<found.lowerBound].lastRange(of: Data([2, 0, 0, 1, 0, 1])))
        bytes[header.lowerBound] = 0x7F
        try bytes.write(to: URL(fileURLWithPath: record + "/data.mdb"))
        let read = try await esctl(["read", "s"], db: record)
        #expect(read.status == 69 && read.stderr.contains("position 1"), "\(read)")
        let verify = try await esctl(["verify", "--json"], db: record)
        #expect(verify.status == 69)
        #expect(verify.stdout.contains(#""check":"records","detail":"position 1 does not decode"#))
        #expect(try Data(contentsOf: URL(fileURLWithPath: record + "/data.mdb")) == bytes, "reading a damaged record wrote to the file")
    }

    @Test("a full disk or a file size limit fails the append with a clear error and leaves the store as it was")
    func fullDisk() async throws {
        let big = directory.appending("big.json")
        try Data(("\"" + String(repeating: "y", count: 1_500_000) + "\"").utf8).write(to: URL(fileURLWithPath: big))

        // Given a store under a 512 KiB file size limit, when an event of 1.5 MB is appended,
        // then the append fails with 69 and the store is as it was.
        let limitedStore = directory.appending("limited")
        #expect(try await ProcessRunner.esctl(["append", "s", "T"], db: limitedStore).status == 0)
        let limitedBefore = try await ProcessRunner.esctl(["export"], db: limitedStore).stdout
        let limited = try await ProcessRunner.run(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", "trap '' XFSZ; ulimit -f 1024; exec \"$0\" append s Big --data @\"$1\" --db \"$2\"", ProcessRunner.esctl.path, big, limitedStore])
        #expect(limited.status == 69, "\(limited)")
        #expect(limited.stderr.contains("disk is full (or the file size limit reached)"), "\(limited.stderr)")
        #expect(try await ProcessRunner.esctl(["export"], db: limitedStore).stdout == limitedBefore)
        #expect(try await ProcessRunner.esctl(["verify"], db: limitedStore).status == 0)

        // Given a store on a 1 MiB file system (when this machine lets the test mount one).
        let mountPoint = directory.appending("small")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
        let mount = try await ProcessRunner.run(URL(fileURLWithPath: "/bin/mount"), ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint])
        guard mount.status == 0 else { return }
        // The system call, not /bin/umount through Foundation's Process: that one lists
        // /proc/self/fd past its buffer in a process with many descriptors (see ChildProcess).
        defer { _ = umount2(mountPoint, Int32(MNT_DETACH)) }
        let store = mountPoint + "/store"
        #expect(try await ProcessRunner.esctl(["append", "s", "T"], db: store).status == 0)
        let before = try await ProcessRunner.esctl(["export"], db: store).stdout
        let full = try await ProcessRunner.esctl(["append", "s", "Big", "--data", "@" + big], db: store)
        #expect(full.status == 69, "\(full)")
        #expect(full.stderr.contains("disk is full"), "\(full.stderr)")
        #expect(try await ProcessRunner.esctl(["export"], db: store).stdout == before)
        #expect(try await ProcessRunner.esctl(["verify"], db: store).status == 0)
        // And the store still takes an append that fits.
        #expect(try await ProcessRunner.esctl(["append", "s", "T"], db: store).status == 0)
    }
}
