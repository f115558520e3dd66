import EsctlCommands
import Lending

// esctl with the lending library's module instead of the seed apps, under a name of its own.
await Esctl.run(name: "lendctl", version: "lendctl 1.0 (an example of the event store's)", apps: [LendingApp()])
