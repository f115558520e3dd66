import Apps
import CLMDB
import Commands
import ConsumerGroups
import EventStore
import EventStorePostgres
import Foundation
import Projections
import Synchronization
import TestSupport

// torture-writer: a writer for the reliability tests, which kill it at random moments.
//
//   torture-writer append  --db DIR --durability full|noMetaSync --start N [--seed S]
//       Appends batch N, N+1, ... forever: each batch is 1 to 4 events (sometimes across two
//       streams) whose ids and bytes follow from (seed, batch, index), so a checker can rebuild
//       them. Prints "ACK batch firstPosition count" once each append has returned. Catches the
//       example projections up every few batches.
//   torture-writer rebuild --db DIR
//       Rebuilds the example projections over and over.
//   torture-writer rebuild-appending --db DIR --start N [--seed S]
//       Rebuilds the example projections over and over in batches of 500 positions, printing
//       "REBUILT" after each, while another task appends batch N, N+1, ... as `append` does.
//   torture-writer process --db DIR --batch N [--hold-after K]
//       Runs a processor over the store's "Ordered" events (one "Noted" per order, in stream
//       "notes-ORDERSTREAM") in transactions of N events, printing "HANDLED position" as each
//       event is handled (before its reaction commits) and "CAUGHT-UP position" at the end. With
//       --hold-after, the K-th event handled prints "HELD position" and blocks there, before its
//       transaction commits, until the process is killed.
//   torture-writer contend --db DIR --process P --count N
//       N times: reads the version of "shared", appends with that exact expectation, prints
//       "OK version" or "CONFLICT"; and appends to "own-P". Prints "DONE".
//   torture-writer node --db DIR|URL --process P --count N --total T
//       One of several nodes sharing one store (a PostgreSQL URL, or an LMDB directory): N times
//       it appends to "shared" with the exact version it read (retrying on conflict, and noting
//       the version it built on), to "own-P", and to "pair-P-a" and "pair-P-b" in one atomic
//       append, printing "ACK position..." for each; meanwhile a subscription from the start
//       reads until it has T events and prints "SEQ count digest" (a digest of every position
//       and id in order), so that every node's sequence can be compared. Prints "DONE" at the end.
//   torture-writer group --db DIR --round R
//       Appends 2,000 "Work" events over 10 streams (the batches still missing), creates the group
//       "g" (4 partitions, 1 s leases) and consumes it as member "w-R": each acknowledgement
//       writes, in its transaction, the event's effect count (table "effects") and its stream's
//       last version (table "order"; a version that does not follow goes to "violations"); every
//       seventh delivery is retried instead. Prints "ACK position" per acknowledgement and
//       "DONE" once the group's checkpoint is the head.
//   torture-writer misuse --db DIR
//       Calls the store from inside a read's closure (which a debug build stops at).
//   torture-writer commands --db DIR [--seed S]
//       Runs the apps' commands forever (workouts, alerts and campground bookings of a few users,
//       from the seed) with a snapshot due every 3 events, printing "DONE n" after each, so a
//       checker can hold every snapshot against the log after a kill.
//
//   torture-writer delete --db DIR --round R
//       Appends two events with ids (from R and a counter) to a new stream "del-R-N", then now
//       and then gives a stream a retention policy of one event and appends again (a trim),
//       deletes it (soft, or hard every fourth), or purges; prints "APPENDED stream id id",
//       "TRIMMED stream" and "DELETED stream soft|hard" once each has returned, and catches the
//       example projections up every few streams.
//
//   torture-writer forget --db DIR --round R
//       Appends an event whose "secret" field is personal to the subject "s-R-N" to the stream
//       "sealed-R-N", prints "SEALED s-R-N", and forgets every second subject, printing
//       "FORGOTTEN s-R-N" once the forget has returned.
//
//   torture-writer fill-readers --db DIR
//       Takes every slot of LMDB's reader table (1,024 read transactions through LMDB's own C
//       API, as another program could), prints "HOLDING" and keeps them until killed.
//
//   torture-writer hold-read --db DIR [--map-size BYTES]
//       Opens a read snapshot, prints "HOLDING" and keeps it until killed (a reader that dies
//       holding its slot, for the stale-reader tests). With --map-size, opens the store with
//       that initial map size (and writes one event, so the store keeps it).

let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

guard let mode = arguments.first, let db = option("--db") else {
    FileHandle.standardError.write(Data("usage: torture-writer append|rebuild|contend --db DIR ...\n".utf8))
    exit(64)
}
if mode == "fill-readers" {
    // Through LMDB directly: the store itself never holds more than a few readers.
    var env: OpaquePointer?
    guard mdb_env_create(&env) == 0, let env, mdb_env_set_maxreaders(env, 1024) == 0, mdb_env_set_maxdbs(env, 128) == 0,
        mdb_env_open(env, db, UInt32(MDB_NOTLS | MDB_RDONLY), 0o600) == 0
    else {
        FileHandle.standardError.write(Data("cannot open \(db) with LMDB\n".utf8))
        exit(69)
    }
    var held = 0
    while true {
        var txn: OpaquePointer?
        guard mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn) == 0 else { break }
        held += 1
    }
    say("HOLDING \(held)")
    while true { sleep(1) }
}
let durability: Durability = option("--durability") == "noMetaSync" ? .noMetaSync : (option("--durability") == "noSync" ? .noSync : .full)
let mapSize = option("--map-size").flatMap(Int.init) ?? 64 << 20

/// The store `--db` names: a PostgreSQL database for a postgres:// URL, else an LMDB directory.
func openLog() async throws -> any EventLog {
    if db.hasPrefix("postgres://") || db.hasPrefix("postgresql://") { return try await PostgresEventStore(url: db) }
    return try EventStore(path: db, configuration: StoreConfiguration(durability: durability, initialMapSize: mapSize))
}

// The modes that run on either backend.
switch mode {
case "node":
    let log = try await openLog()
    let process = option("--process") ?? "0"
    let count = Int(option("--count") ?? "10") ?? 10
    let total = Int(option("--total") ?? "0") ?? 0
    let subscriber = Task {
        var digest = SequenceDigest()
        var seen = 0
        for try await event in log.subscribe(from: .start, filter: .all) {
            digest.add(event)
            seen += 1
            if seen == total { break }
        }
        say("SEQ \(seen) \(digest.text)")
    }
    for sequence in 0..<count {
        while true {
            let version = try await log.streamVersion("shared")
            let data = Data("{\"process\":\"\(process)\",\"sequence\":\(sequence),\"base\":\(version)}".utf8)
            do {
                let result = try await log.append(to: "shared", events: [NewEvent(type: "Claimed", data: data)], expectedVersion: .exact(version))
                say("ACK \(result.positions.map(String.init).joined(separator: " "))")
                break
            } catch let error as EventStoreError where error.code == .versionConflict {
                continue
            }
        }
        let own = try await log.append(to: "own-\(process)", events: [NewEvent(type: "Own", data: Data("{\"sequence\":\(sequence)}".utf8))])
        say("ACK \(own.positions.map(String.init).joined(separator: " "))")
        let pair = try await log.append([
            StreamAppend(stream: "pair-\(process)-a", events: [NewEvent(type: "Paired")], expectedVersion: .exact(UInt64(sequence))),
            StreamAppend(stream: "pair-\(process)-b", events: [NewEvent(type: "Paired")], expectedVersion: .exact(UInt64(sequence))),
        ])
        say("ACK \(pair.flatMap(\.positions).map(String.init).joined(separator: " "))")
    }
    try await subscriber.value
    say("DONE")
    await log.close()
    exit(0)
case "append" where db.hasPrefix("postgres"):
    let log = try await openLog()
    let seed = UInt64(option("--seed") ?? "1") ?? 1
    var batch = UInt64(option("--start") ?? "1") ?? 1
    let runner = try await ProjectionRunner(store: log, projections: AppCatalog.logSummaries)
    while true {
        let results = try await log.append(TortureBatch.appends(seed: seed, batch: batch))
        let positions = results.flatMap(\.positions)
        say("ACK \(batch) \(positions.first ?? 0) \(positions.count)")
        if batch % 5 == 0 { try await runner.catchUp() }
        batch += 1
    }
default:
    break
}

let store = try EventStore(path: db, configuration: StoreConfiguration(durability: durability, initialMapSize: mapSize, upcasters: AppCatalog.upcasters))

switch mode {
case "misuse":
    // A closure that runs inside a read transaction (holding the store's gate) calls the store.
    _ = try await store.append(to: "s", events: [NewEvent(type: "T")])
    _ = try store.forEachEvent(inStream: "s") { _ in _ = try store.headPosition() }
    say("NOT STOPPED")
case "hold-read":
    if option("--map-size") != nil { _ = try await store.append(to: "held", events: [NewEvent(type: "Held")]) }
    try await store.readTables { _ in
        say("HOLDING")
        while true { sleep(1) }
    }
case "commands":
    var random = SeededGenerator(seed: UInt64(option("--seed") ?? "1") ?? 1)
    let backend = try AppBackend(store: store, configuration: CommandHandler.Configuration(snapshotInterval: 3))
    var done = 0
    while true {
        let user = ["a", "b", "c"].randomElement(using: &random) ?? "a"
        do {
            switch Int.random(in: 0..<8, using: &random) {
            case 0: _ = try await backend.fitness(.setGoal(Int.random(in: 50...500, using: &random)), user: user)
            case 1: _ = try await backend.fitness(.start, user: user)
            case 2, 3: _ = try await backend.fitness(.walk(steps: Int.random(in: 1...40, using: &random), distance: 1), user: user)
            case 4: _ = try await backend.fitness(.restart, user: user)
            case 5: _ = try await backend.alerts(.clearAll, user: user)
            case 6: _ = try await backend.campground(.addSite(number: Int.random(in: 1...30, using: &random), electricity: true, water: true), campground: user)
            default: _ = try await backend.campground(.addCamper(fullName: "Camper", phoneNumber: "555"), campground: user)
            }
        } catch is AppError {
            // Refusals are part of the mix.
        }
        done += 1
        say("DONE \(done)")
    }
case "delete":
    let round = UInt8(option("--round") ?? "1") ?? 1
    let runner = try await ProjectionRunner(store: store, projections: AppCatalog.logSummaries)
    var counter: UInt32 = 0
    while true {
        counter += 1
        let stream = "del-\(round)-\(counter)"
        let ids = (0..<2).map { index in
            withUnsafeBytes(of: counter.bigEndian) { c in
                UUID(uuid: (0xDE, round, UInt8(index), 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, c[0], c[1], c[2], c[3]))
            }
        }
        _ = try await store.append(to: stream, events: ids.map { NewEvent(id: $0, type: "Noted", data: Data("{}".utf8)) })
        say("APPENDED \(stream) \(ids[0].uuidString) \(ids[1].uuidString)")
        if counter % 3 == 0 {
            try await store.setRetention(RetentionPolicy(maxCount: 1), for: stream)
            _ = try await store.append(to: stream, events: [NewEvent(type: "Noted", data: Data("{}".utf8))])
            say("TRIMMED \(stream)")
        }
        if counter % 2 == 0 {
            let hard = counter % 4 == 0
            _ = try await store.deleteStream(stream, expectedVersion: .any, hard: hard)
            say("DELETED \(stream) \(hard ? "hard" : "soft")")
        }
        if counter % 5 == 0 { _ = try await store.purge() }
        if counter % 7 == 0 { try await runner.catchUp() }
    }
case "group":
    let round = option("--round") ?? "1"
    let groups = ConsumerGroups(store: store)
    try await store.openTables(["effects", "order", "violations"])
    for batch in try store.headPosition() / 10..<200 {
        _ = try await store.append((0..<10).map { stream in
            StreamAppend(stream: "k-\(stream)", events: [NewEvent(type: "Work", data: Data("{\"batch\":\(batch)}".utf8))])
        })
    }
    try await groups.create(GroupDefinition(name: "g", partitions: 4, maxTries: 1_000, leaseDuration: .seconds(1)))
    let member = try await groups.join("g", member: "w-\(round)", pollInterval: .milliseconds(50))
    // "DONE" once every partition's checkpoint reached the head (idle ones move at the polls).
    Task {
        while true {
            let status = try await groups.status("g")
            if status.checkpoint >= status.head {
                say("DONE")
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
    var deliveries = 0
    for try await delivery in member {
        deliveries += 1
        if deliveries % 7 == 0 {
            _ = try await delivery.nack(.retry)
            continue
        }
        let event = delivery.event
        do {
            try await delivery.acknowledge { txn in
            let key = withUnsafeBytes(of: event.position.bigEndian) { Array($0) }
            let count = try await txn.get("effects", key)?.first ?? 0
            try await txn.put("effects", key, [count &+ 1])
            let stream = Array(event.stream.utf8)
            let last = try await txn.get("order", stream).map { $0.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } } ?? 0
            if event.version != last + 1 { try await txn.put("violations", key, Array("\(event.stream)@\(event.version) after \(last)".utf8)) }
            try await txn.put("order", stream, withUnsafeBytes(of: event.version.bigEndian) { Array($0) })
            }
        } catch let error as ConsumerGroupError where error.code == .leaseLost {
            // Its partition moved to another member, which delivers it again.
            continue
        }
        say("ACK \(event.position)")
    }
case "forget":
    let round = option("--round") ?? "1"
    var counter = 0
    while true {
        counter += 1
        let subject = "s-\(round)-\(counter)"
        let data = Data("{\"n\":\(counter),\"secret\":\"secret of \(subject)\"}".utf8)
        _ = try await store.append(
            to: "sealed-\(round)-\(counter)", events: [NewEvent(type: "Sealed", data: data, personal: [PersonalData(subject: subject, fields: ["secret"])])])
        say("SEALED \(subject)")
        if counter % 2 == 0 {
            _ = try await store.forget(subject)
            say("FORGOTTEN \(subject)")
        }
    }
case "append":
    let seed = UInt64(option("--seed") ?? "1") ?? 1
    var batch = UInt64(option("--start") ?? "1") ?? 1
    let runner = try await ProjectionRunner(store: store, projections: AppCatalog.logSummaries)
    while true {
        let appends = TortureBatch.appends(seed: seed, batch: batch)
        let results = try await store.append(appends)
        let positions = results.flatMap(\.positions)
        say("ACK \(batch) \(positions.first ?? 0) \(positions.count)")
        if batch % 5 == 0 { try await runner.catchUp() }
        batch += 1
    }
case "rebuild":
    let runner = try await ProjectionRunner(store: store, projections: AppCatalog.logSummaries)
    while true {
        _ = try await runner.rebuild()
        say("REBUILT")
    }
case "rebuild-appending":
    let seed = UInt64(option("--seed") ?? "1") ?? 1
    let start = UInt64(option("--start") ?? "1") ?? 1
    let runner = try await ProjectionRunner(store: store, projections: AppCatalog.logSummaries, batchSize: 500)
    // Appends beside the rebuilds until the test kills the process.
    _ = Task {
        var batch = start
        while true {
            _ = try await store.append(TortureBatch.appends(seed: seed, batch: batch))
            batch += 1
        }
    }
    while true {
        _ = try await runner.rebuild()
        say("REBUILT")
    }
case "process":
    let holdAfter = Int(option("--hold-after") ?? "") ?? 0
    let handled = Atomic<Int>(0)
    struct Notes: Processor {
        let name = "notes"
        let eventTypes: Set<String>? = ["Ordered"]
        let holdAfter: Int
        let handled: @Sendable () -> Int
        func react(to event: RecordedEvent) throws -> [StreamAppend] {
            say("HANDLED \(event.position)")
            if handled() == holdAfter {
                // Handled, not committed: where the crash test kills.
                say("HELD \(event.position)")
                while true { sleep(60) }
            }
            return [StreamAppend(stream: "notes-\(event.stream)", events: [NewEvent(type: "Noted", data: Data("{\"for\":\(event.position)}".utf8))])]
        }
    }
    let batch = Int(option("--batch") ?? "5") ?? 5
    let notes = Notes(holdAfter: holdAfter, handled: { handled.add(1, ordering: .relaxed).newValue })
    let reached = try await ProcessorRunner(store: store, batchSize: batch).catchUp(notes)
    say("CAUGHT-UP \(reached)")
    store.close()
case "contend":
    let process = option("--process") ?? "0"
    let count = Int(option("--count") ?? "10") ?? 10
    for sequence in 0..<count {
        let version = try store.streamVersion("shared")
        let data = Data("{\"process\":\"\(process)\",\"sequence\":\(sequence),\"base\":\(version)}".utf8)
        do {
            _ = try await store.append(to: "shared", events: [NewEvent(type: "Claimed", data: data)], expectedVersion: .exact(version))
            say("OK \(version + 1)")
        } catch let error as EventStoreError where error.code == .versionConflict {
            say("CONFLICT")
        }
        _ = try await store.append(to: "own-\(process)", events: [NewEvent(type: "Own", data: data)])
    }
    say("DONE")
    store.close()
default:
    exit(64)
}
