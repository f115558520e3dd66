import Apps
import HTTPServer

/// The seed apps' faces on the server beyond their commands: each app's console view, and the
/// chat's own protocol. `esctl serve` passes them all; the server serves those of the apps
/// `--apps` chose.
public enum SeedServerParts {
    /// Every seed app's parts, the chat's protocol on `chatRoom` (`esctl serve --chat-room`).
    public static func all(chatRoom: String = AppStreams.defaultKey) -> [any AppServerParts] {
        [FitnessServerParts(), ChatServerParts(room: chatRoom), CampgroundServerParts(), ColorServerParts()]
    }
}

/// The fitness app's console view: the workout and its alert queue.
public struct FitnessServerParts: AppServerParts {
    public let app = FitnessApp().name
    public init() {}
    public var consoleViews: [ConsoleView] {
        [ConsoleView(name: "workout", title: "Workout", script: PackageResources.workout_js, stylesheet: PackageResources.workout_css)]
    }
}

/// The campground's console view: its sites, campers and reservations.
public struct CampgroundServerParts: AppServerParts {
    public let app = CampgroundApp().name
    public init() {}
    public var consoleViews: [ConsoleView] {
        [ConsoleView(name: "camp", title: "Campground", script: PackageResources.camp_js, stylesheet: PackageResources.camp_css)]
    }
}

/// The color calculator's console view: its keypad and display.
public struct ColorServerParts: AppServerParts {
    public let app = ColorApp().name
    public init() {}
    public var consoleViews: [ConsoleView] {
        [ConsoleView(name: "color", title: "Color", script: PackageResources.color_js, stylesheet: PackageResources.color_css)]
    }
}
