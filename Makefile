# Tessel: two commands do all the set-up on a fresh Debian 12 machine.
#   make demo   install what is missing, build (Release, build/), run the main job
#   make test   the same set-up, then the whole test suite through ctest
#   make bench  the same set-up, then every sample on every preset (docs/BENCHMARKS.md)
#   make onnx-bench  the ONNX backend node tests in scope on every preset (docs/onnx.md)
#   make model-bench  real models (PyTorch exports) through tessel model compile (docs/models.md)
#   make test-sanitize  the whole suite built with ASan + UBSan, in build-asan/ (docs/hardening.md);
#               make test-sanitize-compile-path: the compile-path suites only (the end of make test)
#   make fuzz   the libFuzzer harnesses, FUZZ_TIME seconds each (fuzz/README.md);
#               make fuzz-replay: the fuzz corpus once through each harness
BUILD ?= build
JOBS  ?= $(shell nproc)
CMAKE_ARGS ?=

# Debian packages Tessel needs. `make deps` installs only those that are missing.
PACKAGES := build-essential cmake ccache libhalide14-0-dev nlohmann-json3-dev \
            libsqlite3-dev libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev \
            qt6-base-dev qt6-charts-dev qt6-svg-dev xvfb xdotool x11-apps imagemagick libopenblas-dev \
            postgresql-15 libpq-dev \
            libonnx-dev libprotobuf-dev libonnx-testdata python3-onnx

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps configure build demo test bench onnx-bench model-bench clean test-sanitize test-sanitize-compile-path fuzz fuzz-build fuzz-replay

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

# The ONNX 1.12 backend node tests of graph/onnx_node_scope.txt on each preset (docs/onnx.md,
# docs/BENCHMARKS.md); reports in $(BUILD)/onnx-test-PRESET.json.
onnx-bench: build
	@rc=0; for a in ascend-like gemmini-like auto-int8; do \
	  ./$(BUILD)/bin/tessel onnx-test --arch $$a --scope graph/onnx_node_scope.txt \
	    --report $(BUILD)/onnx-test-$$a.json /usr/include/onnx/backend/test/data/node || rc=1; \
	done; exit $$rc

# torchvision's ResNet-18 and MobileNetV2 and a transformer encoder layer, exported by PyTorch
# (needs python3-torch and python3-torchvision, not in PACKAGES: large), each compiled with every
# pass's graph and the memory plan in $(BUILD)/models/NAME/compile.txt, then ResNet-18 run on the
# simulator against PyTorch's output ($(BUILD)/models/resnet18/run.txt; docs/models.md).
model-bench: build
	/usr/bin/python3 graph/models/make_models.py --out $(BUILD)/models
	@for m in resnet18 mobilenet_v2 transformer_encoder; do \
	  /usr/bin/time -f "$$m: tessel model compile %e s" ./$(BUILD)/bin/tessel model compile \
	    $(BUILD)/models/$$m/model.onnx --dump-after all > $(BUILD)/models/$$m/compile.txt || exit 1; \
	  tail -1 $(BUILD)/models/$$m/compile.txt; \
	done
	./$(BUILD)/bin/tessel model run $(BUILD)/models/resnet18/model.onnx \
	  --data $(BUILD)/models/resnet18/test_data_set_0 > $(BUILD)/models/resnet18/run.txt || { tail -5 $(BUILD)/models/resnet18/run.txt; exit 1; }
	tail -1 $(BUILD)/models/resnet18/run.txt

test: build
	cd $(BUILD) && QT_QPA_PLATFORM=offscreen ctest --output-on-failure -j $(JOBS)
	$(MAKE) --no-print-directory test-sanitize-compile-path

# The whole suite under AddressSanitizer and UndefinedBehaviorSanitizer (gcc).
# A UBSan report is fatal (-fno-sanitize-recover=all, CMakeLists.txt). Every
# runtime option below, and why, is in docs/hardening.md. CTEST_ARGS picks a
# subset: make test-sanitize CTEST_ARGS="-L 'dsl|backend'".
ASAN_BUILD ?= build-asan
CTEST_ARGS ?=
SANITIZE_ENV := UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# -O1 (what ASan's authors recommend): the Halide translation units compile in about half
# the time they take at Release's -O3 with ASan, and reports keep their line numbers.
SANITIZE_CMAKE := -DCMAKE_BUILD_TYPE=Release -DTESSEL_SANITIZE=address,undefined \
                  -DCMAKE_CXX_FLAGS=-g1 "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" $(CMAKE_ARGS)

test-sanitize: deps
	cmake -S . -B $(ASAN_BUILD) $(SANITIZE_CMAKE)
	$(SANITIZE_ENV) cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && $(SANITIZE_ENV) QT_QPA_PLATFORM=offscreen ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# The CI step that keeps the compile path sanitizer-clean (`make test` ends with it): the
# suites that compile schedules through Halide and the NPU backend, built in $(ASAN_BUILD)
# like test-sanitize (only these targets) and run directly; any ASan, UBSan or LSan report
# fails them. docs/hardening.md "CI".
SANITIZE_SUITES ?= test_dsl_applier test_backend_errors test_backend_hazards test_backend_golden \
                   test_backend_random test_backend_presets

test-sanitize-compile-path: deps
	cmake -S . -B $(ASAN_BUILD) $(SANITIZE_CMAKE) > $(ASAN_BUILD).configure.log || { cat $(ASAN_BUILD).configure.log; exit 1; }
	$(SANITIZE_ENV) cmake --build $(ASAN_BUILD) -j $(JOBS) --target $(SANITIZE_SUITES)
	@for t in $(SANITIZE_SUITES); do \
	  echo "tessel: $$t under ASan + UBSan + LSan"; \
	  $(SANITIZE_ENV) TESSEL_SOURCE_DIR=$(CURDIR) QT_QPA_PLATFORM=offscreen $(ASAN_BUILD)/tests/$$t --gtest_brief=1 || exit 1; \
	done

# libFuzzer harnesses (fuzz/): clang-14 with ASan + UBSan, in their own build
# dir; each runs FUZZ_TIME seconds over fuzz/corpus/<target>. New failing inputs
# and the per-harness summary (runs, exec/s, coverage) land in FUZZ_FINDINGS.
FUZZ_BUILD    ?= build-fuzz
FUZZ_TIME     ?= 60
FUZZ_FINDINGS ?= $(FUZZ_BUILD)/findings
FUZZ_TARGETS  ?= schedule arch binary asm tensor

fuzz-build:
	@command -v clang++-14 >/dev/null || { echo "make fuzz needs clang-14 and libclang-rt-14-dev (apt-get install clang-14 libclang-rt-14-dev)" >&2; exit 1; }
	CC=clang-14 CXX=clang++-14 cmake -S . -B $(FUZZ_BUILD) -DTESSEL_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS)
	cmake --build $(FUZZ_BUILD) -j $(JOBS)

fuzz: fuzz-build
	fuzz/run_fuzz.sh $(FUZZ_BUILD)/fuzz $(FUZZ_TIME) $(FUZZ_FINDINGS) $(FUZZ_TARGETS)

# Every corpus file once through its harness, no fuzzing: the parsers under ASan
# + UBSan in seconds after the harness build (about 3 minutes on 2 cores).
fuzz-replay: fuzz-build
	for t in $(FUZZ_TARGETS); do $(FUZZ_BUILD)/fuzz/fuzz_$$t -runs=0 fuzz/corpus/$$t || exit 1; done

# The IDE driven by xdotool under Xvfb at 1280x800 and 1920x1080, a screenshot after each step
# in docs/images/walkthrough/ (tools/ide_walkthrough.sh; docs/ide.md "Walk-through").
.PHONY: ide-walkthrough doc-figures doc-figures-check
ide-walkthrough: configure
	cmake --build $(BUILD) -j $(JOBS) --target tessel-ide
	TESSEL_IDE=$(BUILD)/bin/tessel-ide tools/ide_walkthrough.sh

# The figures table of docs/ide.md from `tessel run --report-json` (tools/doc_figures.py);
# doc-figures-check only says which lines are stale (ctest -L docs).
doc-figures: configure
	cmake --build $(BUILD) -j $(JOBS) --target tessel
	tools/doc_figures.py --tessel $(BUILD)/bin/tessel

doc-figures-check: configure
	cmake --build $(BUILD) -j $(JOBS) --target tessel
	tools/doc_figures.py --check --tessel $(BUILD)/bin/tessel

clean:
	rm -rf $(BUILD)
