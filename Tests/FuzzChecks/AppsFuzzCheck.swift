import Apps
import Commands
import EventStore
import Foundation
import Projections
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

extension FuzzChecks {
    /// The apps over any bytes, read as a program: commands of every app with arbitrary numbers
    /// and texts, events appended by hand to every app's streams with every app type and data
    /// that is wrong in every way (huge, negative, non-finite numbers, wrong types, missing
    /// fields, not JSON), and catch-ups in between. Promised: nothing traps; every command
    /// either records or is refused by the apps' rules (``AppError``) or the store's limits;
    /// queries answer for every key; and each projection's live state hashes as its rebuild.
    @discardableResult
    public static func apps(_ bytes: [UInt8]) async throws(Finding) -> AppsRun {
        let directory: String
        do {
            directory = try scratchDirectory()
        } catch {
            throw Finding("no scratch directory: \(error)")
        }
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ids = Counter()
        let store: EventStore
        do {
            store = try EventStore(
                path: directory + "/store",
                configuration: StoreConfiguration(
                    durability: .noSync, clock: { Date(timeIntervalSince1970: 1_767_225_600 + Double(ids.seconds())) },
                    idGenerator: { ids.next() }, upcasters: AppCatalog.upcasters))
        } catch {
            throw Finding("the store does not open: \(error)")
        }
        defer { store.close() }
        let backend: AppBackend
        do {
            backend = try AppBackend(store: store)
        } catch {
            throw Finding("the apps do not open on the store: \(error)")
        }
        var program = Program(bytes)
        let runner: ProjectionRunner
        do {
            runner = try await ProjectionRunner(store: store, projections: AppCatalog.all)
        } catch {
            throw Finding("the runner does not open: \(error)")
        }
        var outcome = AppsRun()
        while let operation = program.next() {
            outcome.operations += 1
            do {
                try await run(operation, &program, backend: backend, store: store, runner: runner)
            } catch let error as AppError {
                // A refusal by the apps' rules, or a reservation recorded as invalid.
                if error.code != .recordedInvalid { outcome.refused += 1 }
            } catch let error as EventStoreError where error.code == .invalidInput {
                outcome.refused += 1  // the store's limits (a name too long)
            } catch {
                throw Finding("operation \(operation) failed with \(error)")
            }
        }
        do {
            _ = try await runner.catchUp()
            for key in Program.keys {
                for projection in AppCatalog.all {
                    var parameters: [String: String] = [:]
                    let paging = Set(Page.parameters.map(\.name))
                    for parameter in projection.queryParameters where !["date", "site"].contains(parameter.name) && !paging.contains(parameter.name) {
                        parameters[parameter.name] = key
                    }
                    _ = try await runner.query(projection.name, parameters: QueryParameters(parameters))
                    if projection.queryParameters.contains(where: { $0.name == "limit" }) {
                        parameters["limit"] = "2"
                        _ = try await runner.query(projection.name, parameters: QueryParameters(parameters))
                    }
                }
            }
            var live: [String] = []
            for projection in AppCatalog.all { live.append(try await runner.storedHash(of: projection.name)) }
            let reports = try await runner.rebuild()
            let rebuilt = reports.map(\.hash)
            outcome.events = try store.headPosition()
            outcome.passedOver = reports.map(\.eventsSkipped).reduce(0, +)
            guard live == rebuilt else {
                throw Finding("a rebuild differs from the live state: \(zip(AppCatalog.all.map(\.name), zip(live, rebuilt)).filter { $0.1.0 != $0.1.1 }.map(\.0))")
            }
        } catch let finding as Finding {
            throw finding
        } catch {
            throw Finding("the read models failed: \(error)")
        }
        return outcome
    }

    /// What a program did: operations run, refused, events recorded, events the read models
    /// passed over.
    public struct AppsRun: Sendable {
        public var operations = 0
        public var refused = 0
        public var events: UInt64 = 0
        public var passedOver = 0

        public init() {}
    }

    /// ``apps(_:)`` for a caller without concurrency (libFuzzer's callback, on a thread of its own):
    /// runs it on a task and waits.
    public static func appsBlocking(_ bytes: UnsafeRawBufferPointer) throws(Finding) {
        let copy = Array(bytes)
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do {
                _ = try await apps(copy)
            } catch let finding as Finding {
                outcome.set(finding)
            } catch {
                outcome.set(Finding("\(error)"))
            }
            done.signal()
        }
        done.wait()
        if let finding = outcome.get() { throw finding }
    }

    private static func run(
        _ operation: Int, _ program: inout Program, backend: AppBackend, store: EventStore, runner: ProjectionRunner
    ) async throws {
        let user = program.key()
        switch operation {
        case 0: _ = try await backend.fitness(.setGoal(program.int()), user: user)
        case 1: _ = try await backend.fitness(.start, user: user)
        case 2: _ = try await backend.fitness(.pause, user: user)
        case 3: _ = try await backend.fitness(.restart, user: user)
        case 4: _ = try await backend.fitness(.walk(steps: program.int(), distance: program.double()), user: user)
        case 5: _ = try await backend.fitness(.moveNessie(program.double()), user: user)
        case 6: _ = try await backend.alerts(.post(text: program.text(), severity: program.byte() % 2 == 0 ? .good : .bad), user: user)
        case 7: _ = try await backend.alerts(.clear(program.byte() % 2 == 0 ? program.text() : AlertName.allCases[Int(program.byte()) % AlertName.allCases.count].rawValue), user: user)
        case 8: _ = try await backend.alerts(.clearAll, user: user)
        case 9: _ = try await backend.chat(.say(program.text()), user: user, room: program.key())
        case 10: _ = try await backend.chat(.presence(Presence.allCases[Int(program.byte()) % Presence.allCases.count]), user: user, room: program.key())
        case 11: _ = try await backend.chat(.shareLocation(program.text()), user: user, room: program.key())
        case 12: _ = try await backend.campground(.addCamper(fullName: program.text(), phoneNumber: program.text()), campground: user)
        case 13: _ = try await backend.campground(.addSite(number: program.int(), electricity: true, water: false), campground: user)
        case 14: _ = try await backend.campground(.deleteSite(program.int()), campground: user)
        case 15:
            _ = try await backend.campground(
                .reserve(site: program.int(), camperId: "C\(program.byte() % 4)", date: CivilDate(day: Int64(program.int())), nights: program.int()),
                campground: user)
        case 16: _ = try await backend.campground(.cancel(reservationId: "R\(program.byte() % 4)"), campground: user)
        case 17: _ = try await runner.catchUp()
        case 18:
            let keys = ["0", "9", "a", "F", "g", "backspace", "clear", "", "AA"]
            _ = try await backend.color(.press(keys[Int(program.byte()) % keys.count]), calculator: user)
        case 19:
            let texts = ["#006636AA", "abc", "#", "12345678", "123456789", "#xyz", "ff00ff"]
            _ = try await backend.color(.set(texts[Int(program.byte()) % texts.count]), calculator: user)
        default:
            // A hand-appended event: any app's stream, any app's type, data of any shape.
            let stream = Program.streamPrefixes[Int(program.byte()) % Program.streamPrefixes.count] + user
            let type = Program.types[Int(program.byte()) % Program.types.count]
            _ = try await store.append(to: stream, events: [NewEvent(type: type, data: Data(program.data(for: type).utf8))])
        }
    }

    /// Reads operations and their arguments from the bytes; past the end every read gives 0.
    struct Program {
        static let keys = ["u", "v"]
        static let streamPrefixes = [
            AppStreams.fitnessPrefix, AppStreams.alertsPrefix, AppStreams.chatPrefix, AppStreams.campgroundPrefix, AppStreams.colorPrefix,
        ]
        static let types = [
            "GoalSet", "WorkoutStarted", "WorkoutPaused", "WorkoutRestarted", "PedometerUpdated", "NessieMoved", "WorkoutCompleted",
            "WorkoutCaught", "AlertTriggered", "AlertPosted", "AlertCleared", "AllAlertsCleared", "MessagePosted", "PresenceChanged",
            "CamperAdded", "SiteAdded", "SiteDeleted", "ReservationRecorded", "ReservationCancelled", "KeyPressed", "DisplaySet", "Unknown",
        ]
        /// Values that break naive arithmetic and parsing.
        static let numbers = [
            "0", "1", "-1", "9223372036854775807", "-9223372036854775808", "1e308", "-1e308", "4.5", "1e-320", "\"7\"", "null", "true",
            "[1]", "{}", "18446744073709551616",
        ]
        static let texts = ["", " ", "milk", "\u{1b}[31mred", "a\u{0}b", "goalComplete", String(repeating: "x", count: 4_001), "é", "\u{202e}rtl"]

        let bytes: [UInt8]
        var index = 0
        var operations = 0

        init(_ raw: [UInt8]) {
            bytes = Array(raw.prefix(4096))
        }

        /// The next operation (0 to 21), or nil at the end (at most 200 per program).
        mutating func next() -> Int? {
            guard index < bytes.count, operations < 200 else { return nil }
            operations += 1
            return Int(byte()) % 22
        }

        mutating func byte() -> UInt8 {
            guard index < bytes.count else { return 0 }
            defer { index += 1 }
            return bytes[index]
        }

        /// A number: small, or one of the extremes.
        mutating func int() -> Int {
            let selector = byte()
            switch selector % 4 {
            case 0: return Int(byte())
            case 1: return -Int(byte())
            case 2: return [Int.max, Int.min, Int.max - 1, 10_000_000, 10_000_001, 1_000_000_000, 36_500, 36_501, 2_932_896][Int(byte()) % 9]
            default: return Int(Int16(bitPattern: UInt16(byte()) << 8 | UInt16(byte())))
            }
        }

        mutating func double() -> Double {
            [0, 1, -1, 1e9, 1e12, 1e13, .infinity, -.infinity, .nan, 0.5, Double(byte()), .greatestFiniteMagnitude][Int(byte()) % 12]
        }

        mutating func text() -> String { Self.texts[Int(byte()) % Self.texts.count] }

        mutating func key() -> String { byte() % 16 == 15 ? String(repeating: "k", count: 151) : Self.keys[Int(byte()) % 2] }

        /// Data for a hand-appended event: the type's fields with any values, or something else.
        mutating func data(for type: String) -> String {
            let fields = ["goal", "steps", "distance", "alert", "name", "text", "severity", "user", "kind", "presence", "camperId",
                          "fullName", "phoneNumber", "number", "electricity", "water", "reservationId", "site", "dateFrom", "nights",
                          "status", "problem", "key", "hexText"]
            switch byte() % 6 {
            case 0: return "not json"
            case 1: return "{}"
            case 2: return "[1,2]"
            default:
                var members: [String] = []
                for _ in 0..<Int(byte() % 6) {
                    let field = fields[Int(byte()) % fields.count]
                    let value: String
                    switch byte() % 3 {
                    case 0: value = Self.numbers[Int(byte()) % Self.numbers.count]
                    case 1: value = "\"" + ["2026-07-01", "9999-12-31", "0001-01-01", "Reserved", "Invalid", "good", "said", "connected", "goalComplete", "x"][Int(byte()) % 10] + "\""
                    default: value = "\"\(Self.texts[Int(byte()) % 6].replacingOccurrences(of: "\u{0}", with: "\\u0000").replacingOccurrences(of: "\u{1b}", with: "\\u001b"))\""
                    }
                    members.append("\"\(field)\":\(value)")
                }
                return "{" + members.joined(separator: ",") + "}"
            }
        }
    }

    /// Sequential ids and one second per read of the clock.
    final class Counter: Sendable {
        private let count = Mutex(UInt64(0))
        private let clock = Mutex(0)

        func next() -> UUID {
            let n = count.withLock { value -> UInt64 in
                value += 1
                return value
            }
            var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &bytes) { $0.storeBytes(of: n.bigEndian, toByteOffset: 8, as: UInt64.self) }
            return UUID(uuid: bytes)
        }

        func seconds() -> Int {
            clock.withLock { value -> Int in
                value += 1
                return value
            }
        }
    }

    final class Outcome: Sendable {
        private let finding = Mutex<Finding?>(nil)
        func set(_ value: Finding) { finding.withLock { $0 = value } }
        func get() -> Finding? { finding.withLock { $0 } }
    }

    static func scratchDirectory() throws -> String {
        var template = Array("\(NSTemporaryDirectory())/fuzz-apps.XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
        return String(cString: created)
    }
}
