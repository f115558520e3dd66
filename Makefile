# The two commands of the README:
#   make demo   builds esctl and runs a short demo on a fresh local store (.demo/store)
#   make test   builds and runs the whole test suite
# Both first install LMDB (liblmdb-dev, with pkg-config) through apt-get when it is missing.

SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps build demo test clean

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
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

clean:
	rm -rf .build .demo
