import AppModules
import Commands
import EventStoreCore

/// What may be done with one book.
public enum BookCommand: Sendable {
    case add(title: String)
    case lend(member: String)
    case giveBack
}

/// One book, as its events tell it.
public struct Book: Sendable, Equatable {
    public var title: String?
    public var lentTo: String?
}

/// The rules of one book, decided on its events alone wherever they are (the query of its tag,
/// `book:ISBN`): a book is lent only if nobody borrowed it since the decision read it, which the
/// append's condition guarantees however many desks lend at once.
public struct BookDecider: QueryDecider {
    public let isbn: String
    public let initialState = Book()

    public init(isbn: String) {
        self.isbn = isbn
    }

    public func evolve(_ state: inout Book, with event: LendingEvent) {
        switch event {
        case .added(let added): state.title = added.title
        case .lent(let lent): state.lentTo = lent.member
        case .returned: state.lentTo = nil
        }
    }

    public func decide(_ command: BookCommand, state: Book) throws -> [LendingEvent] {
        switch command {
        case .add(let title):
            guard state.title == nil else { throw LendingError(.duplicate, "The book \(isbn) is on the shelf already.") }
            guard !title.isEmpty, title.count <= 200 else { throw LendingError(.invalidInput, "A title is 1 to 200 characters.") }
            return [.added(BookAdded(isbn: isbn, title: title))]
        case .lend(let member):
            guard state.title != nil else { throw LendingError(.notFound, "There is no book \(isbn).") }
            guard !member.isEmpty, member.count <= 100 else { throw LendingError(.invalidInput, "A member's name is 1 to 100 characters.") }
            if let lentTo = state.lentTo { throw LendingError(.notAvailable, "The book \(isbn) is lent to \(lentTo).") }
            return [.lent(BookLent(isbn: isbn, member: member))]
        case .giveBack:
            guard state.title != nil else { throw LendingError(.notFound, "There is no book \(isbn).") }
            guard let lentTo = state.lentTo else { throw LendingError(.notAvailable, "The book \(isbn) is not lent.") }
            return [.returned(BookReturned(isbn: isbn, member: lentTo))]
        }
    }

    public func query(for command: BookCommand) -> EventQuery {
        EventQuery(types: LendingEvent.types, tags: ["book:\(isbn)"])
    }

    public func stream(for event: LendingEvent) -> String { "book-\(isbn)" }

    public func tags(for event: LendingEvent, in state: Book) -> [String] {
        switch event {
        case .added: return ["book:\(isbn)"]
        case .lent(let lent): return ["book:\(isbn)", "member:\(lent.member)"]
        case .returned(let returned): return ["book:\(isbn)", "member:\(returned.member)"]
        }
    }
}

/// The library's refusals: 400 for input it does not take, 404 for a book it does not have, 422
/// for one it cannot lend or take back now.
public struct LendingError: AppRefusal, Equatable {
    public enum Code: String, Sendable {
        case invalidInput, notFound, duplicate, notAvailable
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var codeName: String { code.rawValue }
    public var description: String { message }

    public var category: ErrorCategory {
        switch code {
        case .invalidInput: return .invalidInput
        case .notFound: return .notFound
        case .duplicate, .notAvailable: return .rejected
        }
    }

    public var httpStatus: Int {
        switch code {
        case .invalidInput: return 400
        case .notFound: return 404
        case .duplicate, .notAvailable: return 422
        }
    }

    /// None: the shelf lists every book without a parameter.
    public var listing: (projection: String, parameter: String)? { nil }
    public var recordedEvents: [RecordedEvent] { [] }
}
