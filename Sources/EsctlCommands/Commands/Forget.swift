import ArgumentParser
import EventStore
import Foundation
import WireFormat

/// `esctl forget SUBJECT`: destroys the key of the data personal to a subject.
struct Forget: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Forget a subject: destroy the key of the data personal to it.",
        discussion: """
            Three steps, each safe to repeat: a $ForgetRequested event in $forgotten, the subject's key \
            destroyed (with every command snapshot), a $SubjectForgotten event; a crash between two is \
            finished by the next open. From then on every read, export, projection and the server show \
            the subject's personal data as {"$forgotten":"SUBJECT"}. Forgetting a subject with nothing \
            left to forget writes nothing and says whether it was forgotten before or never had data \
            marked personal here. With --json one object \
            {"subject","key","requestPosition","forgottenPosition","alreadyForgotten","known"} \
            ("key": the id of the key destroyed, never the key itself).
            """)

    @OptionGroup var store: WritingStoreOptions

    @Argument(help: "The subject, as the app named it when it marked data personal (such as camper:C1).")
    var subject: String

    @Flag(help: "Print what was done as JSON.")
    var json = false

    func run() async throws {
        try await reportingErrors {
            let store = try await self.store.openExisting()
            return try await store.closingAfter {
                let forgetting = try await store.forget(subject)
                if json {
                    Console.printJSON(ForgettingJSON.object(forgetting))
                } else if let position = forgetting.forgottenPosition {
                    Console.print("\(subject): forgotten; recorded at position \(position)")
                } else if forgetting.isKnown {
                    Console.print("\(subject): forgotten already; nothing written")
                } else {
                    Console.print("\(subject): nothing to forget: no data was marked personal to it here; nothing written")
                }
            }
        }
    }
}
