import AppModules
import EventStore
import Apps
import Testing

@Suite("Choosing app modules: all, none, or a list")
struct AppSetTests {
    let seeds = AppCatalog.modules

    @Test("all, none and lists choose the modules named, in the built-in order, with their read models and upcasters")
    func chooses() throws {
        // Given the seed modules, when each selection is read, then it names these modules.
        #expect(try AppSet.select("all", from: seeds).names == ["fitness", "chat", "campground", "color"])
        #expect(try AppSet.select("", from: seeds).names == ["fitness", "chat", "campground", "color"])
        #expect(try AppSet.select("none", from: seeds).names == [])
        #expect(try AppSet.select(" color ,fitness,color", from: seeds).names == ["fitness", "color"])
        // And the set's read models and upcasters are those of its modules.
        let camp = try AppSet.select("campground", from: seeds)
        #expect(camp.projections.map(\.name) == ["campers", "campsites", "reservations"])
        #expect(camp.upcasters.count == CampgroundApp().upcasters.count && !camp.upcasters.isEmpty)
        #expect(camp.schemaVersions == CampgroundApp().schemaVersions)
        #expect(try AppSet.select("chat", from: seeds).upcasters.isEmpty)
        #expect(AppSet.none.described == "no app")
        #expect(try AppSet.select("chat,color", from: seeds).described == "chat and color")
    }

    @Test("an unknown or empty name is refused with the names there are")
    func refuses() {
        let cases: [(String, String)] = [
            ("chess", "There is no app named 'chess'; the apps built in are fitness, chat, campground and color, or give all or none."),
            ("chat,", "The list of apps 'chat,' has an empty name; separate names with single commas."),
            ("All", "There is no app named 'All'; the apps built in are fitness, chat, campground and color, or give all or none."),
        ]
        for (selection, message) in cases {
            // Given a selection that names no module, when it is read, then it throws with the sentence.
            let error = #expect(throws: AppSelectionError.self, "\(selection)") { try AppSet.select(selection, from: seeds) }
            #expect(error?.message == message)
            #expect(error?.category == .invalidInput)
        }
    }

    @Test("an input given as parsed members is checked as a JSON body is: a key that is no field, a missing field, a wrong type")
    func checksMembers() throws {
        let fields = [AppField("steps", .integer, required: false), AppField("user", .string)]
        let cases: [([String: JSONValue], String?, String)] = [
            (["user": .string("u"), "stpes": .int(5)], "stpes", "The field 'stpes' is not one POST /x takes; its fields are 'steps', 'user'."),
            (["steps": .int(5)], "user", "The field 'user' is missing from the body of POST /x; give it as a string."),
            (["user": .int(1)], "user", "The field 'user' of POST /x must be a string, not a whole number."),
        ]
        for (members, field, message) in cases {
            // Given members that break the fields, when read, then the refusal names the field.
            let error = #expect(throws: AppInputError.self, "\(members)") { try AppInput(members: members, source: "the body of POST /x", fields: fields) }
            #expect(error?.field == field)
            #expect(error?.message == message)
        }
        // And members that keep them read with their defaults.
        let input = try AppInput(members: ["user": .string("u")], source: "the body of POST /x", fields: fields)
        #expect(try input.int("steps", default: 7) == 7)
        #expect(try input.string("user") == "u")
    }

    @Test("names a route cannot carry are refused")
    func validatesNames() {
        for name in ["", "Chat", "1chat", "chat room", "chat/say", String(repeating: "a", count: 65)] {
            #expect(throws: AppSelectionError.self, "\(name)") { try AppSet.validate(name, what: "app") }
        }
        for name in ["a", "chat", "note-stats", "v2", String(repeating: "a", count: 64)] {
            #expect(throws: Never.self, "\(name)") { try AppSet.validate(name, what: "app") }
        }
    }
}
