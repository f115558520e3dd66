import Commands
import ConsumerGroups
import EventStore
import EventStoreTesting
import Foundation
import Projections
import Testing
import Todo

// The Swift code of the README and of the DocC pages and articles, as written there (never run:
// the console examples of the README, docs/esctl.md and Sources/Apps/README.md are).

func readmeQuickStart() async throws {
    let store = try EventStore(path: "orders.db")   // creates the directory when missing
    defer { store.close() }

    // Append, guarded by the version read: a second run finds the order placed and appends nothing.
    if try store.streamVersion("order-42") == 0 {
        let placed = NewEvent(type: "OrderPlaced", data: Data(#"{"total":12}"#.utf8))
        let result = try await store.append(to: "order-42", events: [placed], expectedVersion: .noStream)
        print(result.positions, result.version)    // [1] 1
    }

    // Read a stream, or any range of the log lazily, a page at a time.
    for event in try store.readStream("order-42") {
        print(event.version, event.type)
    }
    for try await event in store.events(filter: EventFilter(category: "order", types: ["OrderPlaced"])) {
        print(event.position, event.stream)
    }

    // Follow the log: every event of the category from the start, then each one as it is committed.
    for try await event in store.subscribe(from: .start, filter: EventFilter(category: "order")) {
        print(event.position, event.type)
    }
}

func readmeCommands(store: EventStore) async throws {
    let handler = CommandHandler(store: store)
    let outcome = try await handler.handle(.add("buy milk"), with: TodoDecider(list: "home"))
    print(outcome.recorded.map(\.position), outcome.state.open)
}

func readmeProjections(store: EventStore) async throws -> JSONValue {
    let runner = try await ProjectionRunner(store: store, projections: [OpenItemsProjection()])
    let open = try await runner.query(OpenItemsProjection.self, parameters: ["list": "home"])
    return open
}

@Test func addingTwiceIsRefused() {
    DeciderScenario(TodoDecider(list: "home"))
        .given(.added(ItemAdded(item: "milk")))
        .when(.add("milk"))
        .thenThrows(TodoError.alreadyListed("milk"))
}

// The EventStore article "Schema evolution" (SchemaEvolution.md).

struct CamperContact: Codable, Sendable {
    var fullName: String
    var phoneNumber: String
}

struct CamperAdded: EventData {
    static let eventType = "CamperAdded"
    static let schemaVersion: UInt16 = 2
    var camperId: String
    var contact: CamperContact
}

func readmeSchemaEvolution() throws {
    let store = try EventStore(path: "bookings.db", configuration: StoreConfiguration(upcasters: [
        Upcaster("CamperAdded", from: 1) { old in
            ["camperId": old["camperId"] ?? .null,
             "contact": ["fullName": old["fullName"] ?? .null, "phoneNumber": old["phoneNumber"] ?? .null]]
        },
    ]))
    store.close()
}

// The EventStore article "Deletion and retention" (DeletionAndRetention.md).

func readmeDeletion(store: EventStore) async throws -> [StreamDeletion] {
    let deletion = try await store.deleteStream("orders-1", expectedVersion: .exact(2))
    try await store.setRetention(RetentionPolicy(maxCount: 1_000, maxAge: .seconds(90 * 86_400)), for: "sensor-7")
    let removed = try await store.purge()
    return [deletion] + removed
}

// The EventStore article "Forgetting a person" (ForgettingAPerson.md).

func readmeForgetting(store: EventStore) async throws -> SubjectForgetting {
    let added = NewEvent(
        type: "CamperAdded", data: Data(#"{"camperId":"C1","contact":{"fullName":"Ann","phoneNumber":"555"}}"#.utf8),
        personal: [PersonalData(subject: "camper:C1", fields: ["contact"])])
    _ = try await store.append(to: "bookings-main", events: [added])
    let forgetting = try await store.forget("camper:C1")
    return forgetting
}

// The EventStore article "Consistency by query" (ConsistencyByQuery.md).

func readmeConditionalAppend(store: EventStore) async throws -> [AppendResult] {
    let query = EventQuery(types: ["Reserved"], tags: ["site:15"])
    let read = try store.read(query, after: 0, limit: 100)
    guard read.events.isEmpty else { return [] }  // the site is taken: decide so
    let reserved = NewEvent(type: "Reserved", data: Data(#"{"site":15}"#.utf8), tags: ["site:15", "camper:C1"])
    return try await store.append(
        [StreamAppend(stream: "bookings-main", events: [reserved])],
        condition: AppendCondition(failIfEventsMatch: query, after: read.head))
}

// The ConsumerGroups module's page.

func readmeConsumerGroups(store: EventStore) async throws {
    let groups = ConsumerGroups(store: store)
    try await groups.create(GroupDefinition(name: "mail", source: .category("reservation"), maxTries: 3))
    let member = try await groups.join("mail", member: "worker-1")
    for try await delivery in member {
        try await delivery.acknowledge { txn in
            try await txn.put("sent", Array(String(delivery.event.position).utf8), [1])
        }
    }
}
