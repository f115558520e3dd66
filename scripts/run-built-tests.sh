#!/usr/bin/env bash
# Runs the test suite that `swift build --build-tests` built, as `swift test --skip-build` would,
# but without SwiftPM: the test binary itself, with Swift Testing's arguments.
#
#   scripts/run-built-tests.sh [ARGUMENT...]   (passed to the test binary: --filter X, --skip X, ...)
#
# Why not `swift test --skip-build`: it plans the build again even when it builds nothing, and
# SwiftPM 6.3 writes the flags of enabled package traits (-DCLI -DPostgreSQL, and swift-protobuf's
# and Hummingbird's own) in a different order each time it plans. The next `swift build` then sees
# new command lines for every target those flags reach and compiles some 600 steps again: about
# four and a half minutes of a cold `make test` on 2 cores, after the suite, for nothing.
# Colors are off (NO_COLOR) so that the lines are what scripts/hang-check.sh reads, as in CI.
# Exits with the test binary's status: 0 when every test passed.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(swift build --show-bin-path)"
tests="$bin/swift-lmdb-eventstorePackageTests.xctest"
[ -x "$tests" ] || { echo "run-built-tests.sh: no test binary at $tests: run \`swift build --build-tests\` first" >&2; exit 66; }
NO_COLOR=1 exec "$tests" --testing-library swift-testing "$@"
