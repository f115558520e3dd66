import FuzzChecks
import FuzzDriver
import Foundation

// libFuzzer runs the apps' check on each input, read as a program of commands and hand-appended
// events; a trap, an unexpected error or a rebuild that differs from the live state is a crash
// to it, and it keeps the input.
exit(FuzzDriver.run { bytes in try FuzzChecks.appsBlocking(bytes) })
