# SPDX-License-Identifier: BSD-3-Clause
# Thin wrapper around CMake/CTest: `make`, `make run`, `make test`,
# `make install PREFIX=... DESTDIR=...`, `make package` (Debian packages).
BUILD ?= build
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
PREFIX ?= /usr/local
DESTDIR ?=
# The Debian packages are configured for /usr in a build directory of their own.
PKG_BUILD ?= $(BUILD)-deb
# V=1 shows every line of CMake's configure and build steps, compiler
# commands included; by default only warnings, errors and what the
# configure step left out (tools/quiet.sh keeps each step's log in
# $(BUILD)/ and shows it whole when the step fails).
V ?= 0
ifeq ($(V),0)
Q := @
CONFIGURE = sh tools/quiet.sh $(BUILD)/configure.log cmake
BUILD_STEP = sh tools/quiet.sh $(BUILD)/build.log cmake
else
Q :=
CONFIGURE = cmake
BUILD_STEP = cmake
BUILD_VERBOSE = --verbose
endif

.PHONY: all build run test install clean deps bench bench-scaling bench-import package pictures dot-expected props

all: build

# A fresh machine: install what is missing first (tools/setup-deps.sh).
$(BUILD)/CMakeCache.txt:
	@sh tools/setup-deps.sh
	$(Q)$(CONFIGURE) -S . -B $(BUILD) $(CMAKE_FLAGS)

deps:
	@sh tools/setup-deps.sh

build: $(BUILD)/CMakeCache.txt
	$(Q)$(BUILD_STEP) --build $(BUILD) -j $(JOBS) $(BUILD_VERBOSE)

# This machine's connectivity, then a recorded machine replayed.
run: build
	@echo "== this machine: CUDA NVLink connectivity"
	@$(BUILD)/dmaconn -d cuda -c nvlink
	@echo
	@echo "== replay of examples/h200x2-recorded.json (recorded on 2x NVIDIA H200), not this machine"
	@$(BUILD)/dmaconn --replay examples/h200x2-recorded.json -d cuda -c nvlink
	@echo
	@$(BUILD)/dmaconn --replay examples/h200x2-recorded.json --topo

test: build
	$(Q)cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The README's pictures: two replays drawn by `dmaconn --format dot` and
# Graphviz's dot (tools/setup-deps.sh installs graphviz).
PICTURES = examples/dgx1-v100.json tests/topologies/hgx-h100-8-degraded.json
pictures: build
	@mkdir -p docs/img $(BUILD)/pictures
	@set -e; for f in $(PICTURES); do \
		n=$$(basename $$f .json); \
		env -u CUDA_VISIBLE_DEVICES -u CUDA_DEVICE_ORDER DMACONN_QUIET=1 \
			$(BUILD)/dmaconn --replay $$f -d cuda -c nvlink --format dot >$(BUILD)/pictures/$$n.dot; \
		dot -Tsvg $(BUILD)/pictures/$$n.dot -o docs/img/$$n.svg; \
		echo "docs/img/$$n.svg from $$f"; \
	done

# Rewrites the dot test's expected files (tests/dot/) from the CLI as it is:
# read `git diff tests/dot` before committing them.
dot-expected: build
	python3 tests/dot_test.py $(BUILD)/dmaconn $$(command -v mpiexec) --regen

# After a row of DMACONN_PROPERTIES (include/dmaconn_props.h) changed: the
# constants, docs/dmaconn.schema.json and docs/json-output.md's table.
props:
	python3 tools/gen_props.py

# Benchmarks (bench/README.md): first detection against PyTorch, nvidia-smi
# and raw NVML on this machine's GPUs (~4 min); scaling on the fake NVML.
# BENCH_ARGS=--quick for a smoke run.  Not part of `make test`.
bench: build
	python3 bench/run.py --build $(BUILD) $(BENCH_ARGS)

bench-scaling: build
	python3 bench/scaling.py --build $(BUILD) $(BENCH_ARGS)

bench-import: build
	DMACONN_LIBRARY=$(abspath $(BUILD))/libdmaconn.so.0 python3 bench/import_time.py $(BENCH_ARGS)

# Installed files find each other relatively (RPATH, the verify helper, the
# .pc files' ${pcfiledir}), so PREFIX may differ from the configured one.
install: build
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

# libdmaconn0, libdmaconn-dev and dmaconn .deb files in $(PKG_BUILD), and
# libdmaconn-mpi0 and libdmaconn-mpi-dev where MPI is found; warnings do not
# fail a package build (DMACONN_WERROR=OFF).
package:
	@sh tools/setup-deps.sh package
	cmake -S . -B $(PKG_BUILD) -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_BUILD_TYPE=Release \
		-DDMACONN_BUILD_TESTS=OFF -DDMACONN_RELOCATABLE_PC=OFF -DDMACONN_WERROR=OFF $(CMAKE_FLAGS)
	cmake --build $(PKG_BUILD) -j $(JOBS)
	cd $(PKG_BUILD) && cpack -G DEB
	@ls $(PKG_BUILD)/*.deb

clean:
	rm -rf $(BUILD) $(PKG_BUILD)
