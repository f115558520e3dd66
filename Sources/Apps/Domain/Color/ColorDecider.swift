import Commands
import EventStoreCore

/// What a user can do with a calculator.
public enum ColorCommand: Sendable, Equatable {
    /// Press a key: `0`–`9`, `A`–`F` (either case), `backspace`, `clear`.
    case press(String)
    /// Set the display directly: hex digits with or without `#`, in either case.
    case set(String)
}

/// The keypad's rules, for one calculator (stream `color-KEY`): every key press and every direct
/// setting is recorded; an unknown key, a ninth digit and a setting that is not `#` and up to 8
/// hex digits are refused (``AppError/Code/invalidInput``) and record nothing.
public struct ColorDecider: SnapshotDecider {
    public let calculator: String
    public let snapshotName = "color"
    public let snapshotVersion = 1

    public init(calculator: String = AppStreams.defaultKey) {
        self.calculator = calculator
    }

    public var streams: [String] { [AppStreams.color(calculator)] }
    public func stream(for event: ColorEvent) -> String { AppStreams.color(calculator) }
    public var initialState: ColorDisplay { .start }
    public func evolve(_ state: inout ColorDisplay, with event: ColorEvent) { state.apply(event) }

    public func decide(_ command: ColorCommand, state: ColorDisplay) throws -> [ColorEvent] {
        try Validate.key(calculator, "calculator")
        switch command {
        case let .press(name):
            guard let key = ColorKey(name) else {
                throw AppError(.invalidInput, "'\(name.prefix(20))' is not a key; press 0-9, A-F, backspace or clear.")
            }
            if case .digit = key, state.digits.count == ColorDisplay.maximumDigits {
                throw AppError(.invalidInput, "The display holds \(ColorDisplay.maximumDigits) digits already; press backspace or clear first.")
            }
            return [.pressed(KeyPressed(key: key.name))]
        case let .set(text):
            guard let display = ColorDisplay(hexText: text) else {
                throw AppError(.invalidInput, "'\(text.prefix(20))' is not a display; give up to 8 hex digits, with or without '#'.")
            }
            return [.set(DisplaySet(hexText: display.hexText))]
        }
    }
}
