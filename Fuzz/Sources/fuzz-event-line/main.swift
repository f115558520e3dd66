import FuzzChecks
import FuzzDriver
import Foundation

// libFuzzer (linked by -sanitize=fuzzer) runs the NDJSON line parser's check on each input; a
// broken promise is a crash to it, and it keeps the input.
exit(FuzzDriver.run { bytes in try FuzzChecks.eventLine(bytes) })
