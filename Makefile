# Goblin -- plain make. `make` builds build-release/goblin-core.
# `make run` and `make test` first install missing Debian packages (deps/).

CC      ?= gcc
STD     := -std=c11 -D_GNU_SOURCE
WARN    := -Wall -Wextra -Werror -Wno-missing-field-initializers
DEPFL   := -MMD -MP
INC     := -Isrc
LIBS    := -levent_core -levent_pthreads -ljemalloc -lnuma -lm -lpthread

SRC_ALL := $(wildcard src/*.c src/*/*.c)
SRC_LIB := $(filter-out src/main.c,$(SRC_ALL))
SRC_DSMEM := $(wildcard src/ds/*.c src/mem/*.c)
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
