import AppModules
import Apps

/// The app modules this esctl carries: `--apps` chooses among them. The shipped esctl carries
/// the seed apps.
enum BuiltInApps {
    /// Every module built in.
    static let modules: [any AppModule] = AppCatalog.modules

    /// All of them, for help texts (the seed apps' names are distinct and valid).
    static var set: AppSet { (try? AppSet(modules)) ?? .none }
}
