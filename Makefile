# blk — front door. `make` builds and runs the main job; `make test` runs the
# whole CTest suite. Both install missing Debian packages first when run as
# root (otherwise they print the apt line to run).
#   make SANITIZE=1 test     ASan + UBSan build (in build-asan/)
#   make TSAN=1 test         ThreadSanitizer build (in build-tsan/); runs only
#                            the runtime tests (ctest -L runtime: threads, JIT
#                            from 8 threads, cache, launch)
#   make WERROR=1            warnings are errors (CI)
#   make install PREFIX=P    blkc, libblk, libblkrt, headers, stdlib, CMake and
#                            pkg-config files, man page into P (default /usr/local)

SANITIZE ?= 0
TSAN ?= 0
WERROR ?= 0
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
ifeq ($(TSAN),1)
BUILD ?= build-tsan
TEST_LABELS = -L runtime
else ifeq ($(SANITIZE),1)
BUILD ?= build-asan
else
BUILD ?= build
endif
PACKAGES = llvm-22-dev llvm-22-tools re2c lemon cmake libzstd-dev

.PHONY: all deps configure build test main clean fuzz install

all: build main

deps:
	@missing=""; \
	for p in $(PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	  else \
	    echo "missing packages:$$missing"; \
	    echo "run: sudo apt-get update && sudo apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DBLK_SANITIZE=$(if $(filter 1,$(SANITIZE)),ON,OFF) -DBLK_TSAN=$(if $(filter 1,$(TSAN)),ON,OFF) -DBLK_WERROR=$(if $(filter 1,$(WERROR)),ON,OFF)

configure: deps $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The main job: every stdlib file through the front end to Block IR and to
# PTX for sm_90a, then one kernel run through the runtime: on GPU 0 if there
# is one, else on the CPU interpreter device. A file the backend refuses is
# compiled kernel by kernel (tests/tools/ptx_each.sh): what compiles is
# written, what does not is named with the compiler's reason, and the job
# fails only when a kernel fails for another reason than a missing lowering.
main: build
	@mkdir -p $(BUILD)/ptx
	@for f in stdlib/*.blk; do \
	  ./$(BUILD)/blkc --emit=ir $$f -o /dev/null || exit 1; \
	  echo "stdlib: $$f -> Block IR ok"; \
	done
	@for f in stdlib/*.blk; do \
	  sh tests/tools/ptx_each.sh ./$(BUILD)/blkc $$f $(BUILD)/ptx/$$(basename $$f .blk).ptx sm_90a || exit 1; \
	done
	./$(BUILD)/examples/interp_vector_add
	./$(BUILD)/examples/run_vector_add

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(TEST_LABELS)

PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf build build-asan build-tsan

# Bounded libFuzzer campaign (tests/fuzz/, docs/reliability.md): clang build
# with ASan+UBSan in build-fuzz/, then each target for FUZZ_SECONDS.
FUZZ_SECONDS ?= 60
fuzz: | deps
	cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DBLK_FUZZ=ON >/dev/null
	cmake --build build-fuzz -j $(JOBS) --target fuzz_parse fuzz_frontend fuzz_interp fuzz_ptx blkc
	FUZZ_SECONDS=$(FUZZ_SECONDS) BUILD=build-fuzz sh tests/fuzz/campaign.sh
