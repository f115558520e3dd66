import Apps
import AppsCLI
import EsctlCommands

// The shipped esctl: the generic commands with the seed apps (Sources/Apps) built in.
await Esctl.run(apps: AppCatalog.modules, subcommands: SeedAppCommands.all, serveExtras: SeedServeOptions.self)
