import EventStoreCore
@testable import EventStorePostgres
import Testing

/// The store URL of a PostgreSQL store, as parsed: one server or several (libpq's form), a socket
/// directory, `target_session_attrs`, and the errors of anything else. No server is needed.
@Suite("PostgreSQL: the store URL, one server or several")
struct PostgresLocationTests {
    @Test("one server, as before: its host, port, user, password, database; the default port 5432")
    func oneServer() throws {
        // Given one server with a password, and one without a port
        let given = try PostgresLocation(url: "postgres://app:s%40cret@db.example:6543/events")
        let bare = try PostgresLocation(url: "postgresql://app@db.example/events")
        // Then everything is read, and the description hides the password
        #expect(given.endpoints == [.init(host: "db.example", port: 6543)])
        #expect(given.user == "app")
        #expect(given.password == "s@cret")
        #expect(given.database == "events")
        #expect(given.socketDirectory == nil)
        #expect(given.targetSessionAttributes == nil)
        #expect(given.description == "postgres://app:***@db.example:6543/events")
        #expect(bare.endpoints == [.init(host: "db.example", port: 5432)])
        #expect(bare.description == "postgres://app@db.example/events")
        #expect(!given.choosesAmongServers)
        // And percent-encoding is undone once: a password of "p%41" stays that
        #expect(try PostgresLocation(url: "postgres://app:p%2541@h1/events").password == "p%41")
        #expect(try PostgresLocation(url: "postgres://a%2Cb@h1/my%20db").user == "a,b")
        #expect(try PostgresLocation(url: "postgres://a%2Cb@h1/my%20db").database == "my db")
    }

    @Test("several servers in order, an IPv6 one in brackets, and target_session_attrs")
    func severalServers() throws {
        // Given a primary and two standbys
        let location = try PostgresLocation(
            url: "postgres://app@h1:5432,h2:5433,[fd00::7]:5434/events?target_session_attrs=read-write")
        // Then each is read, in order
        #expect(location.endpoints == [.init(host: "h1", port: 5432), .init(host: "h2", port: 5433), .init(host: "fd00::7", port: 5434)])
        #expect(location.targetSessionAttributes == .readWrite)
        #expect(location.choosesAmongServers)
        #expect(location.description == "postgres://app@h1,h2:5433,[fd00::7]:5434/events?target_session_attrs=read-write")
        // And a narrowed location is its one server
        #expect(location.narrowed(to: 1).endpoints == [.init(host: "h2", port: 5433)])
        #expect(location.narrowed(to: 1).host == "h2")
        #expect(location.narrowed(to: 1).port == 5433)
    }

    @Test("each target_session_attrs of libpq is read; without one, a writer wants read-write and a reader any")
    func attributes() throws {
        for attributes in PostgresLocation.TargetSessionAttributes.allCases {
            let location = try PostgresLocation(url: "postgres://app@h1,h2/events?target_session_attrs=\(attributes.rawValue)")
            #expect(location.targetSessionAttributes == attributes)
            #expect(location.effectiveTargetSessionAttributes(writing: true) == attributes)
        }
        let plain = try PostgresLocation(url: "postgres://app@h1,h2/events")
        #expect(plain.effectiveTargetSessionAttributes(writing: true) == .readWrite)
        #expect(plain.effectiveTargetSessionAttributes(writing: false) == .any)
        // One server asks nothing of it, unless the URL says what it must be
        #expect(!(try PostgresLocation(url: "postgres://app@h1/events?target_session_attrs=any")).choosesAmongServers)
        #expect(try PostgresLocation(url: "postgres://app@h1/events?target_session_attrs=primary").choosesAmongServers)
    }

    @Test("servers on one socket directory are told apart by port, with empty host names")
    func sockets() throws {
        let location = try PostgresLocation(url: "postgres://postgres@:5433,:5434/postgres?host=/tmp/pg")
        #expect(location.endpoints.map(\.port) == [5433, 5434])
        #expect(location.narrowed(to: 1).socketPath == "/tmp/pg/.s.PGSQL.5434")
        #expect(location.socketPath == "/tmp/pg/.s.PGSQL.5433")
    }

    @Test("a URL that cannot be used is invalidInput, saying why in one sentence", arguments: [
        ("postgres://app@h1,,h2/events", "names no host"),
        ("postgres://app@h1:0/events", "port '0'"),
        ("postgres://app@h1:99999,h2/events", "port '99999'"),
        ("postgres://app@h1:x/events", "port 'x'"),
        ("postgres://app@[fd00::1/events", "does not close"),
        ("postgres://app@[fd00::1]x/events", "after its bracket"),
        ("postgres://app@h1/events?target_session_attrs=writable", "'writable' is not one of any, read-write"),
        ("postgres://app@h1/events?sslmode=require", "'sslmode' is not supported"),
        ("postgres://h1/events", "names no user"),
        ("postgres://app@h1", "names no database"),
        ("postgres://app@" + Array(repeating: "h", count: 17).joined(separator: ",") + "/events", "17 hosts, more than 16"),
        ("postgres://app@fd00::1:5432/events", "without brackets"),
        ("postgres://app@h1:+5432/events", "port '+5432'"),
        ("postgres://app@evil.com%00.internal/events", "control character"),
        ("postgres://app%0A@h1/events", "its user holds a control character"),
        ("postgres://app:pa%00ss@h1/events", "its password holds a control character"),
        ("postgres://app@h1/ev%0Aents", "its database holds a control character"),
    ])
    func refused(url: String, why: String) {
        let error = #expect(throws: EventStoreError.self) { try PostgresLocation(url: url) }
        #expect(error?.code == .invalidInput)
        #expect(error?.message.contains(why) == true, "\(error?.message ?? "")")
        #expect(error?.message.hasPrefix("The PostgreSQL URL is not usable: ") == true)
    }
}
