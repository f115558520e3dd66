# The two commands of the README:
#   make demo   builds esctl and runs a short demo on a fresh local store (.demo/store)
#   make test   checks the import rules of ARCHITECTURE.md (scripts/import-rules.sh), builds and
#               runs the whole test suite (beside a throwaway PostgreSQL cluster that
#               scripts/with-postgres.sh starts and stops, installing postgresql when missing), fuzzes
#               a running `esctl serve` against docs/openapi.yaml (scripts/schemathesis.sh), tests
#               its web console in headless Chromium (scripts/console-test.sh), attacks a live
#               server in bounded loops (scripts/abuse-test.sh --short), runs UmaDB's Python client
#               and the eventsourcing library's own test cases against `esctl serve --grpc-port`
#               (scripts/grpc-clients-test.sh, installing them from PyPI into .build/), compares
#               its answers with UmaDB's own server's on seeded random operations
#               (scripts/grpc-differential.sh) and attacks it in bounded loops
#               (scripts/grpc-abuse-test.sh), runs esctl on hosts of their own (network namespaces)
#               through a PostgreSQL failover and a partition (scripts/cluster.sh selftest) and
#               under load through two of each, checked (scripts/failover-check.sh), checks
#               that the DocC documentation builds, then builds and tests the Examples package (a
#               to-do app on the public products) and the example backend (scripts/example-backend.sh)
#   make docs   builds the DocC documentation into .build/docs
#   make install / make uninstall   puts a release esctl in $(PREFIX)/bin (default /usr/local)
# They first install LMDB (liblmdb-dev, with pkg-config) through apt-get when it is missing.
# Each step of `make test` says how long it took ("timed: ... took N s", scripts/timed.sh).

SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
PREFIX ?= /usr/local

.PHONY: deps build demo test docs install uninstall clean

# SwiftPM writes the flags of enabled package traits (-DCLI -DPostgreSQL, and those of
# swift-protobuf and Hummingbird) in the order of a Set, which Swift seeds anew in each process:
# each time it plans the build again (a `swift test`, a `swift package dump-symbol-graph`, the
# second build of a fresh clone), the command lines change and some 600 steps are compiled again,
# about four minutes of `make test` on 2 cores. Deterministic hashing keeps the order. The test
# suite itself runs without it (scripts/run-built-tests.sh).
test docs: export SWIFT_DETERMINISTIC_HASHING = 1

deps:
	@if ! pkg-config --exists lmdb 2>/dev/null; then \
		echo "LMDB not found: installing liblmdb-dev and pkg-config with apt-get..."; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq liblmdb-dev pkg-config >/dev/null; \
	fi

build: deps
	$(SWIFT) build --product esctl

demo: build
	./scripts/demo.sh

test: deps
	@# The layers of ARCHITECTURE.md: dependencies point down, only a backend touches its database.
	./scripts/timed.sh ./scripts/import-rules.sh
	./scripts/timed.sh $(SWIFT) build --build-tests
	@# The suite runs under the cooperative-pool check: a task that blocks one of the pool's
	@# threads for a second or more fails the run (docs/testing.md, "What `make test` checks beyond the verdicts").
	@# One test case per core at a time (Swift Testing sets no limit by default): the suite's tests are
	@# busy, not idle, and more of them at once only lengthen every task's wait for a thread.
	@# A run that prints nothing for 10 minutes is hung: it is stopped with the tests still open and
	@# every thread's stack (scripts/hang-check.sh), instead of running into CI's time limit. Only
	@# failures, warnings and the summary are shown; the whole output is in .build/test-output.log.
	@# The built test binary runs as `swift test --skip-build` would run it, with Swift's hashing
	@# seeded anew (scripts/run-built-tests.sh).
	SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=$${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-$$(nproc)} \
		./scripts/timed.sh ./scripts/with-postgres.sh ./scripts/hang-check.sh --quiet --keep .build/test-output.log 600 \
		./scripts/pool-check.sh ./scripts/run-built-tests.sh
	./scripts/timed.sh ./scripts/schemathesis.sh
	./scripts/timed.sh ./scripts/console-test.sh
	./scripts/timed.sh ./scripts/abuse-test.sh --short
	./scripts/timed.sh ./scripts/grpc-clients-test.sh esctl "$$($(SWIFT) build --show-bin-path)/esctl"
	./scripts/timed.sh ./scripts/grpc-differential.sh "$$($(SWIFT) build --show-bin-path)/esctl"
	./scripts/timed.sh ./scripts/grpc-abuse-test.sh "$$($(SWIFT) build --show-bin-path)/esctl"
	@# Hosts of their own (network namespaces): esctl on two of them through a failover, a partition and a slow link.
	ESCTL="$$($(SWIFT) build --show-bin-path)/esctl" ./scripts/timed.sh ./scripts/cluster.sh selftest
	@# The same hosts under load through 2 failovers and 2 partitions, checked in the manner of Jepsen
	@# (the checker first shown to find each violation it looks for).
	./scripts/timed.sh python3 scripts/failover_check_test.py
	./scripts/timed.sh ./scripts/failover-check.sh --rounds 2 --rebuilds "$$($(SWIFT) build --show-bin-path)/esctl"
	./scripts/timed.sh ./scripts/docs.sh --warnings-as-errors
	@# The example packages last: they build in the root package's .build, reusing the dependencies
	@# it compiled, and leave its plan to be made again (scripts/build-example.sh).
	bin=$$(./scripts/timed.sh ./scripts/build-example.sh Examples --build-tests) && ./scripts/timed.sh "$$bin/EventStoreExamplesPackageTests.xctest" --testing-library swift-testing
	./scripts/timed.sh ./scripts/example-backend.sh

docs: deps
	./scripts/docs.sh

# A release build: folds and decisions run about 30 times faster than the demo's debug build.
install: deps
	$(SWIFT) build -c release --product esctl
	install -d "$(DESTDIR)$(PREFIX)/bin"
	install -m 0755 "$$($(SWIFT) build -c release --show-bin-path)/esctl" "$(DESTDIR)$(PREFIX)/bin/esctl"
	@echo "installed $(DESTDIR)$(PREFIX)/bin/esctl"

uninstall:
	rm -f "$(DESTDIR)$(PREFIX)/bin/esctl"

clean:
	rm -rf .build .demo Examples/.build Examples/Lending/.build
