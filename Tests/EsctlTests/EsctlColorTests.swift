import Foundation
import Testing
import TestSupport

/// The color calculator through the built esctl: the five defects' scenarios, refusals, history.
@Suite("esctl color")
struct EsctlColorTests {
    let sandbox: EsctlSandbox

    init() throws {
        sandbox = try EsctlSandbox(prefix: "esctl-color")
    }

    func esctl(_ arguments: String...) async throws -> ProcessOutput {
        try await sandbox.esctl(arguments)
    }

    @Test("the five defects' scenarios print the fixed behaviour")
    func defects() async throws {
        // Defect 1: the name of #006636AA.
        #expect(try await esctl("color", "set", "006636AA", "--calculator", "d1").lines == ["#006636AA  0, 102, 54, 170  rwGreen 66%"])
        // Defect 2: backspace from the start removes one digit.
        #expect(try await esctl("color", "press", "backspace", "--calculator", "d2").lines == ["#0080F  ---, ---, ---, ---  ------------"])
        // Defect 3: a color for rwGreen's hex, white after backspace and for abc.
        let green = try sandbox.objects(try await esctl("color", "set", "#006636", "--calculator", "d3", "--json"))
        #expect(green.first?["color"] as? [String: Int] == ["red": 0, "green": 102, "blue": 54, "opacity": 255])
        let abc = try sandbox.objects(try await esctl("color", "set", "abc", "--calculator", "d3", "--json"))
        #expect(abc.first?["color"] as? [String: Int] == ["red": 255, "green": 255, "blue": 255, "opacity": 255])
        #expect(abc.first?["derived"] as? Bool == false)
        // Defect 4: clear gives #.
        #expect(try await esctl("color", "press", "clear", "--calculator", "d4").lines == ["#  ---, ---, ---, ---  ------------"])
        // Defect 5: the 0-255 scale.
        #expect(try await esctl("color", "set", "#006636aa", "--calculator", "d5").lines == ["#006636AA  0, 102, 54, 170  rwGreen 66%"])
    }

    @Test("query color answers the starting state, the JSON keys, and the state as of a position; refusals exit 64")
    func queryAndRefusals() async throws {
        #expect(try await esctl("init").status == 0)
        let start = try await esctl("query", "color", "--json")
        #expect(start.stdout == ##"{"calculator":"default","hexText":"#0080FF","rgboText":"0, 128, 255, 255","name":"aqua 100%","color":{"red":0,"green":128,"blue":255,"opacity":255},"derived":true}"## + "\n")
        #expect(try await esctl("color", "press", "clear").status == 0)
        #expect(try await esctl("color", "press", "f").lines == ["#F  ---, ---, ---, ---  ------------"])
        #expect(try await esctl("query", "color", "--as-of", "1", "--json").stdout.contains(##""hexText":"#""##))
        #expect(try await esctl("query", "color", "--json").stdout.contains(##""hexText":"#F""##))
        let unknown = try await esctl("color", "press", "G")
        #expect(unknown.status == 64 && unknown.stderr == "esctl: 'G' is not a key; press 0-9, A-F, backspace or clear.\n")
        #expect(try await esctl("color", "set", "12345678").status == 0)
        let ninth = try await esctl("color", "press", "9")
        #expect(ninth.status == 64 && ninth.stderr == "esctl: The display holds 8 digits already; press backspace or clear first.\n")
        #expect(try await esctl("color", "set", "xyz").status == 64)
        #expect(try await sandbox.eventCount() == 3)
    }
}
