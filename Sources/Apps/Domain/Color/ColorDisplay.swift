import EventStoreCore
import Projections

/// A key of the keypad.
public enum ColorKey: Sendable, Equatable {
    /// A hex digit, upper case.
    case digit(Character)
    case backspace
    case clear

    /// The key a name stands for: `0`–`9` and `A`–`F` in either case, `backspace`, `clear`; nil
    /// for anything else.
    public init?(_ name: String) {
        switch name.lowercased() {
        case "backspace": self = .backspace
        case "clear": self = .clear
        default:
            guard name.count == 1, let character = name.uppercased().first, character.isHexDigit, character.isASCII else { return nil }
            self = .digit(character)
        }
    }

    /// The name recorded for the key: the upper-case digit, `backspace` or `clear`.
    public var name: String {
        switch self {
        case let .digit(character): return String(character)
        case .backspace: return "backspace"
        case .clear: return "clear"
        }
    }
}

/// A color on the 0–255 scale.
public struct RGBO: Sendable, Equatable, Codable {
    public var red: Int
    public var green: Int
    public var blue: Int
    public var opacity: Int

    public init(red: Int, green: Int, blue: Int, opacity: Int) {
        self.red = red
        self.green = green
        self.blue = blue
        self.opacity = opacity
    }

    /// White, shown when no color can be derived.
    public static let white = RGBO(red: 255, green: 255, blue: 255, opacity: 255)
}

/// The calculator's display and everything derived from it (DOMAIN.md, "Color calculator").
public struct ColorDisplay: Sendable, Equatable, Codable, RowValue {
    /// `#` and up to 8 upper-case hex digits.
    public private(set) var hexText: String

    /// The most digits the display holds.
    public static let maximumDigits = 8
    /// The display of a calculator never touched.
    public static let start = ColorDisplay(digits: "0080FF")
    /// The named colors, by their 6 digits.
    public static let names: [String: String] = [
        "0080FF": "aqua", "006636": "rwGreen", "000000": "black", "FFFFFF": "white", "FF0000": "red", "00FF00": "green",
        "0000FF": "blue", "FFFF00": "yellow",
    ]

    private init(digits: String) {
        hexText = "#" + digits
    }

    /// A display set directly: hex digits with or without `#`, in either case, at most 8; nil
    /// for anything else.
    public init?(hexText text: String) {
        let digits = text.hasPrefix("#") ? String(text.dropFirst()) : text
        guard digits.count <= Self.maximumDigits, digits.allSatisfy({ $0.isHexDigit && $0.isASCII }) else { return nil }
        self.init(digits: digits.uppercased())
    }

    /// The digits after the `#`.
    public var digits: Substring { hexText.dropFirst() }

    /// The display after a key press: a digit appended (when there is room), the last digit
    /// removed (the `#` stays), or cleared to `#`.
    public func pressing(_ key: ColorKey) -> ColorDisplay {
        switch key {
        case let .digit(character):
            guard digits.count < Self.maximumDigits else { return self }
            return ColorDisplay(digits: digits + String(character))
        case .backspace:
            return ColorDisplay(digits: String(digits.dropLast()))
        case .clear:
            return ColorDisplay(digits: "")
        }
    }

    /// The color, when the display holds exactly 6 digits (opacity 255) or 8 (the last two the
    /// opacity); nil otherwise.
    public var color: RGBO? {
        let bytes = Array(digits.utf8)
        guard bytes.count == 6 || bytes.count == 8 else { return nil }
        var values: [Int] = []
        for offset in stride(from: 0, to: bytes.count, by: 2) {
            guard let value = Int(String(decoding: bytes[offset..<(offset + 2)], as: UTF8.self), radix: 16) else { return nil }
            values.append(value)
        }
        return RGBO(red: values[0], green: values[1], blue: values[2], opacity: values.count == 4 ? values[3] : 255)
    }

    /// `R, G, B, O` on 0–255, or `---, ---, ---, ---`.
    public var rgboText: String {
        guard let color else { return "---, ---, ---, ---" }
        return "\(color.red), \(color.green), \(color.blue), \(color.opacity)"
    }

    /// The color's name and its opacity as a whole percentage rounded down (`rwGreen 66%`), or
    /// 12 dashes when the color has no name or none can be derived.
    public var name: String {
        guard let color, let name = Self.names[String(digits.prefix(6))] else { return String(repeating: "-", count: 12) }
        return "\(name) \(color.opacity * 100 / 255)%"
    }

    /// `{"hexText","rgboText","name","color":{"red","green","blue","opacity"},"derived"}`.
    public func json(calculator: String) -> JSONValue {
        let shown = color ?? .white
        return [
            "calculator": .string(calculator), "hexText": .string(hexText), "rgboText": .string(rgboText), "name": .string(name),
            "color": ["red": .int(shown.red), "green": .int(shown.green), "blue": .int(shown.blue), "opacity": .int(shown.opacity)],
            "derived": .bool(color != nil),
        ]
    }

    /// Folds one event in.
    public mutating func apply(_ event: ColorEvent) {
        switch event {
        case let .pressed(pressed):
            if let key = ColorKey(pressed.key) { self = pressing(key) }
        case let .set(set):
            if let display = ColorDisplay(hexText: set.hexText) { self = display }
        }
    }
}
