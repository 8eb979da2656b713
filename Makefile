# Tessel: two commands do all the set-up on a fresh Debian 12 machine.
#   make demo   install what is missing, build (Release, build/), run the main job
#   make test   the same set-up, then the whole test suite through ctest
#   make bench  the same set-up, then every sample on every preset (docs/BENCHMARKS.md)
BUILD ?= build
JOBS  ?= $(shell nproc)
CMAKE_ARGS ?=

# Debian packages Tessel needs. `make deps` installs only those that are missing.
PACKAGES := build-essential cmake ccache libhalide14-0-dev nlohmann-json3-dev \
            libsqlite3-dev libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev \
            qt6-base-dev qt6-charts-dev qt6-svg-dev xvfb libopenblas-dev

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps configure build demo test bench clean

all: build

deps:
	@missing=""; \
	for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "tessel: installing missing packages:$$missing"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	else \
	  echo "tessel: all required packages are installed"; \
	fi

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	./$(BUILD)/bin/tessel demo

bench: build
	./$(BUILD)/bin/tessel bench --all

test: build
	cd $(BUILD) && QT_QPA_PLATFORM=offscreen ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD)
