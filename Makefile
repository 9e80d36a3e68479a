# Goblin -- GNU make.
#
#   make                   build-release/goblin-core and goblin-store (same as `make release`)
#   make debug|asan|tsan   build-<mode>/goblin-core
#   make unit              build and run the C unit tests (release objects)
#   make bench-tools       swiss-bench, hget-driver and numa-probe in build-release/
#   make fuzz-build        the libFuzzer targets in build-fuzz/
#   make fuzz              run each of them for FUZZ_SECONDS
#   make fuzz-quick        the short fuzzing pass of `make test` on its own
#   make soak              the full soak test against the release build
#   make run               start the release server with redis-compat.conf
#   make test              the whole suite (tests/run_all.sh)
#   make deps              install the missing Debian packages (deps/install.sh)
#   make clean             remove every build directory; clean-fuzz: build-fuzz only
#
# `make run` and `make test` run deps first.

.PHONY: all release debug asan tsan unit print-libs bench-tools numa-probe \
        fuzz fuzz-build fuzz-quick soak run test deps clean clean-fuzz

all: release

# ---------------------------------------------------------------------------
# Compiler and flags

ifeq ($(origin CC),default)
CC := gcc
endif
STD   := -std=c11 -D_GNU_SOURCE
WARN  := -Wall -Wextra -Werror -Wno-missing-field-initializers
DEPFL := -MMD -MP
INC   := -Isrc $(shell pkg-config --cflags lua5.1 2>/dev/null || echo -I/usr/include/lua5.1) $(shell pkg-config --cflags openssl 2>/dev/null)
# Debian's lua-cjson and lua-bitop (the scripting libraries cjson and bit),
# linked from their static archives: their helper symbols (strbuf_*,
# fpconv_*) then clash at link time with any of ours instead of silently
# interposing at run time.
LUALIBS := -l:liblua5.1-cjson.a -l:liblua5.1-bitop.a
# -lhttp_parser: Debian's libhttp-parser (2.9.4), a small, well-kept HTTP/1.x
# parser (Node.js's for years), parses the HTTP front-end's requests and
# the origin's responses. -lxxhash: Debian's libxxhash, XXH3 for the
# HTTP front-end's ETags (a hash of whole values at memory speed).
LIBS  := $(shell pkg-config --libs openssl 2>/dev/null || echo -lssl -lcrypto) -levent_core -levent_pthreads -lhttp_parser -lxxhash -ljemalloc -lnuma -luring $(LUALIBS) -llua5.1 -lm -lpthread
# The sanitizers and libFuzzer need the libc allocator: without jemalloc,
# and with -DGOBLIN_NO_JEMALLOC so that the code does not call it.
LIBS_LIBC := $(filter-out -ljemalloc,$(LIBS))

# ---------------------------------------------------------------------------
# Sources

# Every .c file under src/, at any depth (src/cmd/types/ ...).
SRC_ALL   := $(shell find src -name '*.c' | sort)
# The server without its main(): what the fuzz targets link against.
SRC_LIB   := $(filter-out src/main.c,$(SRC_ALL))
# What the unit tests and swiss-bench link against: the helpers, the data
# structures, the memory layer, the packed encodings, the write stream and
# the key list.
SRC_DSMEM := $(sort $(wildcard src/util/*.c src/ds/*.c src/mem/*.c)) src/base/tstat.c src/db/strval.c src/db/keylist.c src/persist/packed.c src/persist/wstream.c
SRC_UNIT  := $(sort $(wildcard tests/c/*.c))

# ---------------------------------------------------------------------------
# Build modes: build-<mode>/ holds the objects (mirroring the tree), the
# server goblin-core and the unit-test binary unit-tests.

MODES := release debug asan tsan

# Link-time optimisation: a command's path crosses many small functions in
# other files (the client's flags, the clock, the statistics, the keyspace
# lock); inlined across files, PING takes ~14 % fewer instructions, SET and
# GET 8-10 %, for ~6 s more of a clean build.
CFLAGS_release := -O2 -g -flto=auto
CFLAGS_debug   := -O0 -g3
CFLAGS_asan    := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer
CFLAGS_tsan    := -O1 -g -fsanitize=thread

DEFS_asan := -DGOBLIN_NO_JEMALLOC
DEFS_tsan := -DGOBLIN_NO_JEMALLOC

LIBS_release := $(LIBS)
LIBS_debug   := $(LIBS)
LIBS_asan    := $(LIBS_LIBC) -fsanitize=address,undefined
LIBS_tsan    := $(LIBS_LIBC) -fsanitize=thread

define MODE_RULES
build-$(1)/%.o: %.c
	@mkdir -p $$(dir $$@)
	$$(CC) $$(STD) $$(WARN) $$(DEPFL) $$(INC) $$(CFLAGS_$(1)) $$(DEFS_$(1)) -c $$< -o $$@

build-$(1)/goblin-core: $$(SRC_ALL:%.c=build-$(1)/%.o)
	$$(CC) $$(CFLAGS_$(1)) -o $$@ $$^ $$(LIBS_$(1))

# goblin-store: the same program, started with cache-mode defaults (main.c
# looks at the name it was started by).
build-$(1)/goblin-store: build-$(1)/goblin-core
	ln -sf goblin-core $$@

build-$(1)/unit-tests: $$(SRC_UNIT:%.c=build-$(1)/%.o) $$(SRC_DSMEM:%.c=build-$(1)/%.o)
	$$(CC) $$(CFLAGS_$(1)) -o $$@ $$^ $$(LIBS_$(1))

$(1): build-$(1)/goblin-core build-$(1)/goblin-store
endef
$(foreach m,$(MODES),$(eval $(call MODE_RULES,$(m))))

# ---------------------------------------------------------------------------
# Unit tests (tests/c/)

# The libraries the server links with (tests that link their own driver
# against the server's objects ask for them here).
print-libs:
	@echo $(LIBS)

unit: build-release/unit-tests
	./build-release/unit-tests

# ---------------------------------------------------------------------------
# Benchmark tools (not tests; see benchmarks/README), built from release
# objects:
#   swiss-bench  the swiss index against a chained table (benchmarks/swiss_bench.c)
#   hget-driver  the pipelined HGET load generator of benchmarks/*.py
#   numa-probe   read bandwidth and pointer-chase latency for every (CPU node,
#                memory node) pair; it refuses a ratio when binding confines
#                nothing (utils/numa-probe.c)

BENCH_TOOLS := build-release/swiss-bench build-release/hget-driver build-release/numa-probe

bench-tools: $(BENCH_TOOLS)

numa-probe: build-release/numa-probe

build-release/swiss-bench: build-release/benchmarks/swiss_bench.o $(SRC_DSMEM:%.c=build-release/%.o)
	$(CC) $(CFLAGS_release) -o $@ $^ $(LIBS_release)

build-release/hget-driver: build-release/benchmarks/hget_driver.o
	$(CC) $(CFLAGS_release) -o $@ $^ -lhiredis

build-release/numa-probe: build-release/utils/numa-probe.o
	$(CC) $(CFLAGS_release) -o $@ $^ -lnuma -lpthread

# ---------------------------------------------------------------------------
# Fuzzing: one libFuzzer target per tests/fuzz/fuzz_<target>.c -- the
# RESP/inline request parser (resp), the configuration file parser (config),
# the glob matcher (glob), the RDB reader (rdb), RESTORE's payload reader
# (restore) and the stream value loader through both (stream) -- built with clang, -fsanitize=fuzzer,address,undefined, against
# the server objects without main.c and without jemalloc, in build-fuzz/.
#
# `make fuzz` runs the targets one after the other, each for FUZZ_SECONDS
# (default 60), from its committed seed corpus tests/fuzz/corpus/<target>;
# the inputs it finds go to build-fuzz/corpus/<target>, crashes to
# build-fuzz/crashes/. A crash stops the run: fix it and add the input to the
# seed corpus. `make fuzz-quick` is tests/fuzz/run.sh: every target for 15 s,
# two at a time; `make test` runs the same script for 20 s per target.

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,$(sort $(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_CFLAGS  := -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -DGOBLIN_NO_JEMALLOC
FUZZ_OBJS    := $(SRC_LIB:%.c=build-fuzz/%.o)
# The config parser reports errors on stderr; libFuzzer keeps its own output.
FUZZ_OPTS_config := -close_fd_mask=2

build-fuzz/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(STD) $(filter-out -Werror,$(WARN)) $(DEPFL) $(INC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

build-fuzz/fuzz-%: build-fuzz/tests/fuzz/fuzz_%.o $(FUZZ_OBJS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LIBS_LIBC)

fuzz-build: $(FUZZ_TARGETS:%=build-fuzz/fuzz-%)

# FUZZ_RUN target: one libFuzzer run of FUZZ_SECONDS.
FUZZ_RUN = mkdir -p build-fuzz/corpus/$(1) && \
    echo "=== fuzz-$(1): $(FUZZ_SECONDS) s from tests/fuzz/corpus/$(1)" && \
    ./build-fuzz/fuzz-$(1) -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
        -artifact_prefix=build-fuzz/crashes/$(1)- $(FUZZ_OPTS_$(1)) \
        build-fuzz/corpus/$(1) tests/fuzz/corpus/$(1)

fuzz: fuzz-build
	@mkdir -p build-fuzz/crashes
	@$(foreach t,$(FUZZ_TARGETS),$(call FUZZ_RUN,$(t)) &&) true

fuzz-quick:
	@sh tests/fuzz/run.sh

# ---------------------------------------------------------------------------
# Soak: tests/soak/soak.py, 120 clients on every command family, then a check
# of the dataset against a model. `make soak` runs it for its default 150 s;
# `make test` for 60 s on the release build and 45 s each on the ASan and
# TSan builds.

soak: release
	python3 tests/soak/soak.py --server ./build-release/goblin-core

# ---------------------------------------------------------------------------
# Running, testing, dependencies

run: deps release
	./build-release/goblin-core redis-compat.conf

test: deps
	@sh tests/run_all.sh

deps:
	@sh deps/install.sh

# ---------------------------------------------------------------------------
# Cleaning

clean: clean-fuzz
	rm -rf $(MODES:%=build-%)

clean-fuzz:
	rm -rf build-fuzz

# Header dependencies recorded by -MMD in every build directory.
-include $(shell find build-* -name '*.d' 2>/dev/null)
