import EsctlCommands
import Lending

// esctl with the lending library's module instead of the seed apps.
await Esctl.run(apps: [LendingApp()])
