import EventStore
import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Files and environments that are not what a store expects end in the documented exit and one
/// sentence, never a signal, and a failed creation leaves nothing behind.
@Suite("Odd files and full disks")
struct OddFilesTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory(prefix: "odd-files")
    }

    @Test("creating a store on a full file system is 69 with one sentence, and leaves no directory or lock file")
    func creatingOnAFullDisk() async throws {
        let mountPoint = directory.appending("full")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
        let mount = try await ProcessRunner.run(URL(fileURLWithPath: "/bin/mount"), ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint])
        guard mount.status == 0 else { return }  // this machine does not let the test mount one
        // The system call, not /bin/umount through Foundation's Process: that one lists
        // /proc/self/fd past its buffer in a process with many descriptors (see ChildProcess).
        defer { _ = umount2(mountPoint, Int32(MNT_DETACH)) }
        // Given a file system with no space left
        let filler = FileManager.default.createFile(atPath: mountPoint + "/filler", contents: nil)
        #expect(filler)
        let handle = try #require(FileHandle(forWritingAtPath: mountPoint + "/filler"))
        while (try? handle.write(contentsOf: Data(count: 64 << 10))) != nil, (try? handle.offset()) ?? 0 < 2 << 20 {}
        try? handle.close()
        // When each command that creates a store is pointed at a new directory there
        for arguments in [["init"], ["append", "s", "T"], ["import", "-"], ["fitness", "goal", "5"]] {
            let path = mountPoint + "/new"
            let output = try await ProcessRunner.esctl(arguments, db: path, stdin: Data(#"{"stream":"s","type":"T"}"#.utf8))
            // Then it is the store-unavailable exit with one sentence, and nothing is left
            #expect(output.status == 69, "\(arguments): \(output)")
            #expect(output.stderr.hasPrefix("esctl: The disk is full"), "\(arguments): \(output.stderr)")
            #expect(output.stderr.split(separator: "\n").count == 1)
            #expect(try FileManager.default.contentsOfDirectory(atPath: mountPoint) == ["filler"], "\(arguments)")
        }
    }

    @Test("LMDB's lock file has its pages before LMDB maps it (a full disk cannot make a reader a SIGBUS)")
    func lockFileIsAllocated() throws {
        let store = try EventStore(path: directory.appending("store"))
        store.close()
        var info = stat()
        #expect(stat(directory.appending("store/lock.mdb"), &info) == 0)
        #expect(info.st_size == 65_664)
        #expect(Int(info.st_blocks) * 512 >= Int(info.st_size), "the lock file is sparse: \(info.st_blocks) blocks")
    }

    @Test("a data file that is a FIFO, /dev/null or a directory is 69 with a sentence saying what to do")
    func dataFileIsNotAFile() async throws {
        let fifo = directory.appending("fifo")
        let devnull = directory.appending("devnull")
        let folder = directory.appending("folder")
        for path in [fifo, devnull, folder] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false) }
        #expect(mkfifo(fifo + "/data.mdb", 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: devnull + "/data.mdb", withDestinationPath: "/dev/null")
        try FileManager.default.createDirectory(atPath: folder + "/data.mdb", withIntermediateDirectories: false)
        for path in [fifo, devnull, folder] {
            for arguments in [["stats"], ["append", "s", "T"], ["verify"]] {
                let output = try await ProcessRunner.esctl(arguments, db: path, timeout: .seconds(20))
                #expect(output.status == 69, "\(arguments) \(path): \(output)")
                #expect(output.stderr == "esctl: The data file '\(path)/data.mdb' is not a regular file; move it away and restore the store from a backup.\n")
            }
        }
    }

    @Test("an address-space limit below the store's map is 69 with a sentence, not an internal error")
    func addressSpaceLimit() async throws {
        // Given a store whose map is 8 GiB (a sparse file: the map is address space, not disk)
        let store = directory.appending("big-map")
        let opened = try EventStore(path: store, configuration: StoreConfiguration(durability: .noSync, initialMapSize: 8 << 30))
        _ = try await opened.append(to: "s", events: [NewEvent(type: "T")])
        await opened.close()
        // When esctl runs under a 3 GB address-space limit
        let output = try await ProcessRunner.run(
            URL(fileURLWithPath: "/bin/sh"), ["-c", "ulimit -v 3000000; exec \"$0\" stats --db \"$1\"", ProcessRunner.esctl.path, store])
        // Then it says so
        #expect(output.status == 69, "\(output)")
        #expect(output.stderr.contains("There is not enough address space to map the store"), "\(output.stderr)")
        #expect(output.stderr.contains("ulimit -v"))
    }

    @Test("a full reader table (another program holding every slot) is 69 with a sentence, not an internal error")
    func readerTableFull() async throws {
        // Given a store, and another program holding every slot of LMDB's reader table
        let path = directory.appending("full-readers")
        #expect(try await ProcessRunner.esctl(["append", "s", "T"], db: path).status == 0)
        let holder = try RunningProcess(ProcessRunner.productsDirectory.appendingPathComponent("torture-writer"), ["fill-readers", "--db", path])
        defer { holder.send(SIGKILL) }
        let held = try await holder.waitForStdoutLines(1)
        #expect(held.first?.hasPrefix("HOLDING 10") == true, "\(held)")
        // When esctl reads and writes
        for command in [["stats"], ["read", "s"], ["append", "s", "T"]] {
            let output = try await ProcessRunner.esctl(command, db: path)
            // Then each says what is wrong and what to do, with the store-unavailable exit
            #expect(output.status == 69, "\(command): \(output)")
            #expect(output.stderr.contains("Too many readers have the store open at once (LMDB's reader table is full)"), "\(command): \(output.stderr)")
            #expect(output.stderr.contains("end some of them, or wait, and try again"))
        }
    }

    @Test("a reader that dies holding its slot is cleared by the writer, so its pages can be reused")
    func staleReadersAreCleared() async throws {
        // Given a store open here, which checks for dead readers after every commit
        let path = directory.appending("readers")
        let store = try EventStore(path: path, configuration: StoreConfiguration(durability: .noSync, staleReaderCheckInterval: .zero))
        defer { store.close() }
        _ = try await store.append(to: "s", events: [NewEvent(type: "T")])
        // And another process reading, killed while it holds its snapshot
        let holder = try RunningProcess(ProcessRunner.productsDirectory.appendingPathComponent("torture-writer"), ["hold-read", "--db", path])
        _ = try await holder.waitForStdoutLines(1)
        let pid = holder.processIdentifier
        #expect(try store.statistics().readerProcesses.contains(pid), "the holder's slot is listed")
        holder.send(SIGKILL)
        _ = try await holder.waitForExit()
        #expect(try store.statistics().readerProcesses.contains(pid), "the dead reader's slot is cleared only by a check")
        // When the writer commits (the check runs after a commit's appends are acknowledged, and
        // before the writer takes the next job: the second append returns after it ran)
        _ = try await store.append(to: "s", events: [NewEvent(type: "T")])
        _ = try await store.append(to: "s", events: [NewEvent(type: "T")])
        // Then the dead reader's slot is gone (this process's own slots may come and go)
        let after = try store.statistics().readerProcesses
        #expect(!after.contains(pid), "readers after the commit: \(after)")
        #expect(after.allSatisfy { $0 == getpid() }, "readers after the commit: \(after)")
    }
}

/// A debug build stops at a call of the store from inside its own transaction, with the reason.
@Suite("Misuse in a debug build")
struct MisuseTests {
    @Test("calling the store from inside a read's closure stops a debug build with a sentence")
    func nestedCallStops() async throws {
        let directory = try TemporaryDirectory(prefix: "misuse")
        let output = try await ProcessRunner.run(
            ProcessRunner.productsDirectory.appendingPathComponent("torture-writer"), ["misuse", "--db", directory.appending("store")])
        #expect(output.status > 128, "\(output)")
        #expect(!output.stdout.contains("NOT STOPPED"))
        #expect(output.stderr.contains("The store was called (a read) from inside a read or a table transaction's closure"), "\(output.stderr)")
    }
}

/// A damaged B-tree page is reported by verify and refused by backup, never a crash of either:
/// LMDB reads it in a child process first (`esctl check-pages`).
@Suite("Damaged pages")
struct DamagedPagesTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory(prefix: "damaged-pages")
    }

    /// A store of a few hundred events in 20 streams, with a caught-up projection.
    func seed(_ path: String) async throws {
        let lines = (1...300).map { n in
            #"{"stream":"s-\#(n % 20)","type":"T","data":{"n":\#(n),"pad":"\#(String(repeating: "x", count: 300))"}}"#
        }.joined(separator: "\n")
        #expect(try await ProcessRunner.esctl(["import", "-"], db: path, stdin: Data(lines.utf8)).status == 0)
        #expect(try await ProcessRunner.esctl(["append", "marked", "T", "--data", #"{"marker":"MARKERMARKER"}"#], db: path).status == 0)
        #expect(try await ProcessRunner.esctl(["query", "count-by-type"], db: path).status == 0)
    }

    @Test("a leaf page marked as a branch: verify reports it (69), backup copies nothing (69)")
    func leafMarkedAsBranch() async throws {
        let path = directory.appending("store")
        try await seed(path)
        // Given the page that holds the last record with its flags changed from leaf to branch
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb"))
        let marker = try #require(bytes.range(of: Data("MARKERMARKER".utf8)))
        let page = marker.lowerBound / 4096 * 4096
        #expect(bytes[page + 10] == 0x02)
        bytes[page + 10] = 0x01
        try bytes.write(to: URL(fileURLWithPath: path + "/data.mdb"))
        // Then verify says what is damaged, without a signal (LMDB crashes on such a page or
        // reports it, depending on where its cursor meets it)
        let verify = try await ProcessRunner.esctl(["verify"], db: path)
        #expect(verify.status == 69, "\(verify)")
        #expect(verify.stdout.hasPrefix("problem: pages: "), "\(verify.stdout)")
        #expect(verify.stdout.contains("damaged"), "\(verify.stdout)")
        let json = try await ProcessRunner.esctl(["verify", "--json"], db: path)
        #expect(json.status == 69 && json.stdout.contains(#""check":"pages""#), "\(json)")
        // And backup refuses, copying nothing
        let copy = directory.appending("copy")
        let backup = try await ProcessRunner.esctl(["backup", copy], db: path)
        #expect(backup.status == 69, "\(backup)")
        #expect(backup.stderr.contains("Nothing was copied."), "\(backup.stderr)")
        #expect(!FileManager.default.fileExists(atPath: copy))
    }

    @Test("one flipped bit in the header of each of 30 pages in turn: verify and backup end in 0 or 69, never a signal")
    func flippedPageHeaders() async throws {
        let original = directory.appending("original")
        try await seed(original)
        let pristine = try Data(contentsOf: URL(fileURLWithPath: original + "/data.mdb"))
        let pages = pristine.count / 4096
        var random = SeededGenerator(seed: 42)
        var damagedReports = 0
        for trial in 0..<30 {
            let path = directory.appending("trial-\(trial)")
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            var bytes = pristine
            let page = Int.random(in: 2..<pages, using: &random)
            let offset = Int.random(in: 0..<16, using: &random)
            bytes[page * 4096 + offset] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &random)
            try bytes.write(to: URL(fileURLWithPath: path + "/data.mdb"))
            for arguments in [["verify"], ["verify", "--deep"], ["backup", path + "-copy"]] {
                let output = try await ProcessRunner.esctl(arguments, db: path)
                #expect(output.status == 0 || output.status == 69, "page \(page) byte \(offset), \(arguments): \(output)")
                if output.status == 69 { damagedReports += 1 }
            }
        }
        // Some of the flips land on what LMDB reads (most fall on free pages or unused bytes).
        #expect(damagedReports > 0)
    }
}
