import AppModules
import Commands
import EventStoreCore
import Projections

/// The lending library as an app module: its read model and its commands, which `lendctl serve`
/// serves at `POST /apps/lending/{command}` and `lendctl app lending COMMAND` runs.
public struct LendingApp: AppModule {
    public let name = "lending"
    public let summary = "A lending library: books, and who has them."
    public var projections: [any Projection] { [ShelfProjection()] }

    public init() {}

    public func commands(_ context: AppContext) throws -> [AppCommand] {
        let isbn = AppField("isbn", .string, "The book's ISBN.")
        func book(_ name: String, _ summary: String, _ fields: [AppField], _ command: @escaping @Sendable (AppInput) throws -> BookCommand) -> AppCommand {
            AppCommand(name, summary: summary, fields: [isbn] + fields) { input in
                let isbn = try input.string("isbn")
                guard !isbn.isEmpty, isbn.count <= 20 else { throw input.invalid("isbn", "An ISBN is 1 to 20 characters.") }
                let outcome = try await context.handler.handle(try command(input), with: BookDecider(isbn: isbn))
                return .events(outcome.recorded, passedOver: outcome.passedOver)
            }
        }
        return [
            book("add-book", "Puts a book on the shelf.", [AppField("title", .string, "The book's title.")]) { input in .add(title: try input.string("title")) },
            book("lend", "Lends a book to a member, if nobody has it.", [AppField("member", .string, "Who borrows it.")]) { input in
                .lend(member: try input.string("member"))
            },
            book("return", "Takes a book back.", []) { _ in .giveBack },
        ]
    }
}
