# Thin wrapper around CMake/CTest: `make`, `make run`, `make test`.
BUILD ?= build
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all build run test install clean deps

all: build

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# This machine's connectivity, then a recorded machine replayed.
run: build
	@echo "== this machine: CUDA NVLink connectivity"
	@$(BUILD)/dmaconn -d cuda -c nvlink
	@echo
	@echo "== replay of examples/h200x2-recorded.json (recorded on 2x NVIDIA H200), not this machine"
	@$(BUILD)/dmaconn --replay examples/h200x2-recorded.json

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD)
