# Goblin -- plain make. `make` builds build-release/goblin-core.
# `make run` and `make test` first install missing Debian packages (deps/).

CC      ?= gcc
STD     := -std=c11 -D_GNU_SOURCE
WARN    := -Wall -Wextra -Werror -Wno-missing-field-initializers
DEPFL   := -MMD -MP
INC     := -Isrc $(shell pkg-config --cflags lua5.1 2>/dev/null || echo -I/usr/include/lua5.1)
LIBS    := -levent_core -levent_pthreads -ljemalloc -lnuma -luring -llua5.1 -lm -lpthread

SRC_ALL := $(shell find src -name "*.c" | sort)
SRC_LIB := $(filter-out src/main.c,$(SRC_ALL))
SRC_DSMEM := $(wildcard src/util/*.c src/ds/*.c src/mem/*.c) src/persist/packed.c
UNIT_SRC := $(wildcard tests/c/*.c)

MODES := release debug asan tsan
CFLAGS_release := -O2 -g
CFLAGS_debug   := -O0 -g3
CFLAGS_asan    := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer
CFLAGS_tsan    := -O1 -g -fsanitize=thread
# jemalloc replaces malloc in release/debug; sanitizers need the libc allocator.
LIBS_release := $(LIBS)
LIBS_debug   := $(LIBS)
LIBS_asan    := $(filter-out -ljemalloc,$(LIBS)) -fsanitize=address,undefined
LIBS_tsan    := $(filter-out -ljemalloc,$(LIBS)) -fsanitize=thread
DEFS_asan := -DGOBLIN_NO_JEMALLOC
DEFS_tsan := -DGOBLIN_NO_JEMALLOC

.PHONY: all release debug asan tsan run test unit deps clean tcl diff clients bench-tools

all: release

define MODE_RULES
build-$(1)/%.o: %.c
	@mkdir -p $$(dir $$@)
	$$(CC) $$(STD) $$(WARN) $$(DEPFL) $$(INC) $$(CFLAGS_$(1)) $$(DEFS_$(1)) -c $$< -o $$@

build-$(1)/goblin-core: $$(SRC_ALL:%.c=build-$(1)/%.o)
	$$(CC) $$(CFLAGS_$(1)) -o $$@ $$^ $$(LIBS_$(1))

build-$(1)/unit-tests: $$(UNIT_SRC:%.c=build-$(1)/%.o) $$(SRC_DSMEM:%.c=build-$(1)/%.o)
	$$(CC) $$(CFLAGS_$(1)) -o $$@ $$^ $$(LIBS_$(1))

$(1): build-$(1)/goblin-core
endef
$(foreach m,$(MODES),$(eval $(call MODE_RULES,$(m))))

-include $(shell find build-* -name '*.d' 2>/dev/null)

deps:
	@sh deps/install.sh

run: deps release
	./build-release/goblin-core redis-compat.conf

unit: build-release/unit-tests
	./build-release/unit-tests

test: deps
	@sh tests/run_all.sh

clean:
	rm -rf build-release build-debug build-asan build-tsan

# ---------------------------------------------------------------------------
# bench-tools: C micro-benchmarks (not tests; see benchmarks/README).
# Appended by the ds/mem engineer; built from the release objects.
BENCH_TOOLS := build-release/swiss-bench

bench-tools: $(BENCH_TOOLS)

build-release/swiss-bench: build-release/benchmarks/swiss_bench.o $(SRC_DSMEM:%.c=build-release/%.o)
	$(CC) $(CFLAGS_release) -o $@ $^ $(LIBS_release)

# ---------------------------------------------------------------------------
# bench-tools (continued): load generators for benchmarks/*.py (issue 8).
# Appended by the benchmarks engineer; adds to the bench-tools list above.
bench-tools: build-release/hget-driver

build-release/hget-driver: benchmarks/hget_driver.c
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(WARN) $(CFLAGS_release) -o $@ $< -lhiredis

# ---------------------------------------------------------------------------
# fuzz: libFuzzer targets (issue 10), appended by the security/robustness
# engineer. Targets: every tests/fuzz/fuzz_<target>.c -- the RESP parser
# (resp), the config file parser (config), the glob matcher (glob), the RDB
# reader (rdb) -- built with
# clang, -fsanitize=fuzzer,address,undefined, against the server objects
# (no main, no jemalloc). `make fuzz` runs each for FUZZ_SECONDS (default
# 60) from its committed seed corpus tests/fuzz/corpus/<target>; inputs it
# finds go to build-fuzz/corpus/<target>, crashes to build-fuzz/crashes/.
# A crash stops the run: fix it and add the input to the seed corpus.
# `make test` runs tests/fuzz/run.sh (each target 15 s, counted per target)
# and tests/soak/soak.py --duration 45; `make soak` is the full 150 s soak.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_CFLAGS  := -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -DGOBLIN_NO_JEMALLOC
FUZZ_LIBS    := $(filter-out -ljemalloc,$(LIBS))
FUZZ_OBJS    := $(SRC_LIB:%.c=build-fuzz/%.o)
# config: its parse errors print to stderr; libFuzzer keeps its own output.
FUZZ_OPTS_config := -close_fd_mask=2

.PHONY: fuzz fuzz-build fuzz-quick soak clean-fuzz

build-fuzz/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(STD) $(filter-out -Werror,$(WARN)) $(DEPFL) $(INC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

build-fuzz/fuzz-%: build-fuzz/tests/fuzz/fuzz_%.o $(FUZZ_OBJS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(FUZZ_LIBS)

fuzz-build: $(FUZZ_TARGETS:%=build-fuzz/fuzz-%)

FUZZ_RUN = mkdir -p build-fuzz/corpus/$(1) && echo "=== fuzz-$(1): $(FUZZ_SECONDS) s from tests/fuzz/corpus/$(1)" && \
    ./build-fuzz/fuzz-$(1) -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
    -artifact_prefix=build-fuzz/crashes/$(1)- $(FUZZ_OPTS_$(1)) build-fuzz/corpus/$(1) tests/fuzz/corpus/$(1)

fuzz: fuzz-build
	@mkdir -p build-fuzz/crashes
	@$(foreach t,$(FUZZ_TARGETS),$(call FUZZ_RUN,$(t)) &&) true

fuzz-quick:
	@sh tests/fuzz/run.sh

soak: release
	python3 tests/soak/soak.py --server ./build-release/goblin-core

clean-fuzz:
	rm -rf build-fuzz

clean: clean-fuzz

# ---------------------------------------------------------------------------
# numa-probe (issue 9): read bandwidth and pointer-chase latency for every
# (CPU node, memory node) pair; refuses a ratio when binding confines
# nothing (see utils/numa-probe.c). Appended by the NUMA engineer.
bench-tools: build-release/numa-probe

.PHONY: numa-probe
numa-probe: build-release/numa-probe

build-release/numa-probe: build-release/utils/numa-probe.o
	$(CC) $(CFLAGS_release) -o $@ $^ -lnuma -lpthread
