# Thin wrapper over CMake for the README's two commands (`make run`, `make test`)
# and `make install`. Everything real lives in CMakeLists.txt.

BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
PREFIX     ?= /usr/local
# make install PREFIX=~/.local: a shell that leaves the ~ alone (zsh, sh) still works.
PREFIX_DIR  = $(patsubst ~%,$(HOME)%,$(PREFIX))
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
# ctest runs one test more than there are cores: several tests wait on a
# child (a crash test's slowed apply, a fake server, dpkg) part of the time.
TEST_JOBS  ?= $(shell echo $$(( $(JOBS) + 1 )))
# Seconds each fuzz target runs under `make fuzz` (FUZZ_SECONDS) and under ctest
# in build-fuzz/ after `make fuzz-build` alone (FUZZ_TEST_SECONDS).
FUZZ_SECONDS ?= 60
FUZZ_TEST_SECONDS ?= 8
# libFuzzer's -seed: 0 draws a new one each run (exploration); .ci/run fixes
# one, so that its gate follows the same inputs every time.
FUZZ_SEED ?= 0

# Debian packages the build needs (python3 runs the CLI tests, clang the fuzzers,
# strace proves that a bad digest never becomes a path, btrfs-progs gives the
# dedupe test a file system that can reflink, python3-prometheus-client parses the
# Prometheus output as a second, independent reader, libsystemd-dev lets history read
# the systemd journal, systemd-journal-remote writes real journal files for its tests,
# prometheus-node-exporter reads the Prometheus files as a real textfile collector,
# zsh, fish and bash-completion run the completion scripts (bash with and
# without bash-completion), man-db renders the man page at 80 columns (its
# groff-base warns of lines it cannot adjust), chromium renders `report`'s page
# headless and screenshots it; lintian is not installed: it pulls in ~70 Perl
# packages, so the .deb test lints only where it is already there).
BUILD_PKGS = build-essential cmake pkg-config libjansson-dev libxxhash-dev libssl-dev libarchive-dev libsystemd-dev
TEST_PKGS  = python3 clang libclang-rt-dev strace btrfs-progs python3-prometheus-client systemd-journal-remote \
             prometheus-node-exporter chromium zsh fish bash-completion man-db

.PHONY: all run test install deb deps test-deps build asan fuzz-build clean fuzz fuzz-long bench

all: build

deps:
	@sh tools/ensure-deps.sh $(BUILD_PKGS)

test-deps:
	@sh tools/ensure-deps.sh $(BUILD_PKGS) $(TEST_PKGS)

# The release tree builds no C unit tests nor fuzz replays (OA_C_TESTS=OFF):
# make test runs those in the sanitizer tree only.
build: deps
	cmake -S . -B "$(BUILD)" -DCMAKE_INSTALL_PREFIX="$(PREFIX_DIR)" -DOA_C_TESTS=OFF >/dev/null
	cmake --build "$(BUILD)" -j $(JOBS)

# List the user's store, or the bundled demo store when the user has none.
# Quiet: only the binary is built, with one line of progress (none when it is
# up to date), then the table.
run: deps
	@sh tools/quiet-build.sh "$(BUILD)" $(JOBS) -DCMAKE_INSTALL_PREFIX="$(PREFIX_DIR)"
	@echo "ollama-audit: the program is $(BUILD)/ollama-audit (make install PREFIX=~/.local puts it in ~/.local/bin)" >&2
	@sh tools/run-demo.sh "$(BUILD)/ollama-audit"

asan: test-deps
	cmake -S . -B "$(ASAN_BUILD)" -DOA_SANITIZE=ON -DOA_WERROR=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
	cmake --build "$(ASAN_BUILD)" -j $(JOBS)

fuzz-build: test-deps
	@if command -v clang >/dev/null 2>&1; then \
	  CC=clang cmake -S . -B "$(FUZZ_BUILD)" -DOA_FUZZ=ON -DOA_SANITIZE=ON -DOA_WERROR=ON \
	    -DOA_FUZZ_SECONDS=$(FUZZ_TEST_SECONDS) -DOA_FUZZ_SEED=$(FUZZ_SEED) -DCMAKE_BUILD_TYPE=Debug >/dev/null && \
	  cmake --build "$(FUZZ_BUILD)" -j $(JOBS); \
	else echo "clang not found: skipping fuzz targets"; fi

# The whole suite. In build/, what the release build must pass as built:
# install, package and layout tests, golden output of every command, the option
# and format matrices (ctest -LE sanitizer-tree). Then in build-asan/ every test
# under ASan+UBSan: the C unit tests (built there only), the CLI tests, each
# fuzz target replaying its seed corpus with fixed truncations and byte flips
# (tests/fuzz/replay.c), the same every run. The random campaign is `make fuzz`
# (clang); .ci/run runs it after this.
test: build asan
	cd "$(BUILD)" && ctest --output-on-failure -j $(TEST_JOBS) -LE sanitizer-tree
	cd "$(ASAN_BUILD)" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(TEST_JOBS)

# Every fuzz target for FUZZ_SECONDS each (default 60), one after the other,
# on its committed seed corpus (tests/fuzz/corpus/<target>) plus what earlier
# runs found (build-fuzz/tests/fuzz-work/<target>); prints executions per
# target. make fuzz FUZZ_SECONDS=600 for a longer campaign.
fuzz:
	$(MAKE) fuzz-build FUZZ_TEST_SECONDS=$(FUZZ_SECONDS)
	@if [ -d "$(FUZZ_BUILD)" ]; then cd "$(FUZZ_BUILD)" && ctest -V -R '^fuzz\.' > fuzz.log 2>&1; rc=$$?; \
	  awk '/Test command/ { match($$0, /fuzz_[a-z_]+/); t = substr($$0, RSTART, RLENGTH) } \
	       /number_of_executed_units/ { print t ": " $$NF " executions in $(FUZZ_SECONDS) s" } \
	       /\*\*\*|ERROR:/ { print }' fuzz.log; \
	  [ $$rc -eq 0 ] || { echo "fuzzing found a problem: $(FUZZ_BUILD)/fuzz.log"; exit 1; }; fi

# The old name of `make fuzz`.
fuzz-long: fuzz

bench: build
	sh tests/bench/run.sh "$(BUILD)"

# Into PREFIX (default /usr/local; PREFIX=~/.local needs no root): the program,
# both libraries, headers, pkg-config file, CMake package, man page, bash/zsh/fish
# completions, the systemd service and timer.
install: build
	cmake --install "$(BUILD)" --prefix "$(PREFIX_DIR)"

# The Debian package, $(BUILD)/ollama-audit_<version>_<arch>.deb, from the built tree.
deb: build
	cd "$(BUILD)" && cpack -G DEB

clean:
	rm -rf "$(BUILD)" "$(ASAN_BUILD)" "$(FUZZ_BUILD)"
