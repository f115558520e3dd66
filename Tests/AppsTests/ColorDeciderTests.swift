import Apps
import Commands
import Testing
import TestSupport

/// The color calculator's rules, each named after the defect it guards (DOMAIN.md).
@Suite("Color calculator rules")
struct ColorDeciderTests {
    let calculator = DeciderScenario(ColorDecider(calculator: "c"))
    func press(_ key: String) -> ColorEvent { .pressed(KeyPressed(key: key)) }
    func set(_ hex: String) -> ColorEvent { .set(DisplaySet(hexText: hex)) }

    @Test("the starting state: #0080FF, aqua 100%, 0, 128, 255, 255")
    func startingState() {
        let state = calculator.state
        #expect(state.hexText == "#0080FF")
        #expect(state.name == "aqua 100%")
        #expect(state.rgboText == "0, 128, 255, 255")
        #expect(state.color == RGBO(red: 0, green: 128, blue: 255, opacity: 255))
    }

    @Test("defect 1: #006636AA is named rwGreen 66%, not Optional(...)")
    func defect1Name() {
        let outcome = calculator.when(.set("006636AA"))
        outcome.then(set("#006636AA"))
        #expect(outcome.stateAfter.name == "rwGreen 66%")
    }

    @Test("defect 2: backspace from the start removes one digit: #0080F")
    func defect2Backspace() {
        let outcome = calculator.when(.press("backspace"))
        outcome.then(press("backspace"))
        #expect(outcome.stateAfter.hexText == "#0080F")
        // And the # stays however often it is pressed.
        var display = calculator.state
        for _ in 0..<12 { display = display.pressing(.backspace) }
        #expect(display.hexText == "#")
    }

    @Test("defect 3: a color for rwGreen's hex; white after backspace and for abc")
    func defect3Color() {
        #expect(calculator.when(.set("006636")).stateAfter.color == RGBO(red: 0, green: 102, blue: 54, opacity: 255))
        let backspaced = calculator.when(.press("backspace")).stateAfter
        #expect(backspaced.color == nil)
        #expect(backspaced.json(calculator: "c")["color"] == ["red": 255, "green": 255, "blue": 255, "opacity": 255])
        #expect(backspaced.json(calculator: "c")["derived"] == false)
        let abc = calculator.when(.set("abc")).stateAfter
        #expect(abc.hexText == "#ABC" && abc.color == nil && abc.name == "------------" && abc.rgboText == "---, ---, ---, ---")
    }

    @Test("defect 4: clear gives #")
    func defect4Clear() {
        let outcome = calculator.when(.press("clear"))
        outcome.then(press("clear"))
        #expect(outcome.stateAfter.hexText == "#")
    }

    @Test("defect 5: #006636AA gives 0, 102, 54, 170 on the 0-255 scale")
    func defect5Scale() {
        #expect(calculator.when(.set("#006636AA")).stateAfter.rgboText == "0, 102, 54, 170")
    }

    @Test("a ninth digit is refused; unknown keys and settings that are not hex are refused; lower case is accepted")
    func refusals() {
        let eight = calculator.given(set("#12345678"))
        eight.when(.press("9")).thenRefused(.invalidInput, "The display holds 8 digits already; press backspace or clear first.")
        eight.when(.press("backspace")).then(press("backspace"))
        calculator.when(.press("G")).thenRefused(.invalidInput, "'G' is not a key; press 0-9, A-F, backspace or clear.")
        calculator.when(.press("10")).thenRefused(.invalidInput)
        calculator.when(.set("#12345678A")).thenRefused(.invalidInput)
        calculator.when(.set("xyz")).thenRefused(.invalidInput, "'xyz' is not a display; give up to 8 hex digits, with or without '#'.")
        calculator.given(press("clear")).when(.press("a")).then(press("A"))
        #expect(calculator.given(press("clear"), press("A"), press("b")).state.hexText == "#AB")
        calculator.when(.set("#ff00ff")).then(set("#FF00FF"))
    }

    @Test("typing a color key by key derives it at 6 digits and again at 8")
    func typing() {
        var state = calculator.given(press("clear")).state
        for key in ["F", "F", "0", "0", "0"] { state = state.pressing(ColorKey(key) ?? .clear) }
        #expect(state.color == nil)
        state = state.pressing(.digit("0"))
        #expect(state.name == "red 100%")
        state = state.pressing(.digit("8"))
        #expect(state.color == nil)
        state = state.pressing(.digit("0"))
        #expect(state.name == "red 50%" && state.rgboText == "255, 0, 0, 128")
    }
}
