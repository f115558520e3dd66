#!/usr/bin/env bash
# Runs the test suite that `swift build --build-tests` built, as `swift test --skip-build` would,
# but without SwiftPM: the test binary itself, with Swift Testing's arguments.
#
#   scripts/run-built-tests.sh [ARGUMENT...]   (passed to the test binary: --filter X, --skip X, ...)
#
# Why not `swift test --skip-build`: it plans the build again, and a plan is where SwiftPM 6.3
# writes the package traits' flags (-DCLI -DPostgreSQL...) in an order that changes from one
# process to the next unless SWIFT_DETERMINISTIC_HASHING is set (the Makefile sets it): without
# it, the next `swift build` compiled some 600 steps again, four minutes of a cold `make test` on
# 2 cores. And the tests should run with Swift's hashing seeded anew, as every program does,
# which the variable, passed on by `swift test`, would turn off: here it is not passed on.
# Colors are off (NO_COLOR) so that the lines are what scripts/hang-check.sh reads, as in CI.
# Exits with the test binary's status: 0 when every test passed.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(swift build --show-bin-path)"
tests="$bin/swift-lmdb-eventstorePackageTests.xctest"
[ -x "$tests" ] || { echo "run-built-tests.sh: no test binary at $tests: run \`swift build --build-tests\` first" >&2; exit 66; }
unset SWIFT_DETERMINISTIC_HASHING
NO_COLOR=1 exec "$tests" --testing-library swift-testing "$@"
