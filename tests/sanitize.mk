# SPDX-License-Identifier: GPL-2.0-or-later
# Included by the Makefile: `make test-asan` and `make fuzz` (tests/asan/README.md,
# tests/fuzz/README.md). Both build apart from build/ (C objects in their own
# folder) and reuse build/'s CUDA objects: nvcc's host compiler does not take
# the sanitizer flags, and CUDA code is the same in every build.

ASAN_BUILD   ?= build-asan
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
# UBSan stops at the first report so that undefined behaviour fails the test
# that triggered it; float-cast-overflow is not part of `undefined` in gcc.
# -O2 as in build/: gcc's -Werror warnings (format truncation) depend on the
# optimisation level, and the tests run faster.
SAN_FLAGS := -O2 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fsanitize=float-cast-overflow \
             -fno-sanitize-recover=all
FUZZ_TARGETS := $(FUZZ_SRC:tests/fuzz/%.c=%)

.PHONY: test-asan fuzz fuzz-build

# The fuzz targets without libFuzzer (tests/fuzz/replay.c): `make test`
# replays the regression inputs and seed corpus with them. gcc writes one
# dependency file per command, for the last source: the target's own.
$(BUILD)/fuzz/%: tests/fuzz/%.c tests/fuzz/replay.c tests/fuzz/fuzz.h $(BUILD)/libvkcu.a
	@mkdir -p $(@D)
	@echo "LINK $@"
	@$(CC) $(CFLAGS) -Itests/fuzz -MMD -MP -MT $@ -MF $@.d -o $@ tests/fuzz/replay.c $< $(BUILD)/libvkcu.a $(LDLIBS)

# The libFuzzer programs (built by `make fuzz` with clang in $(FUZZ_BUILD)).
$(BUILD)/libfuzzer/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(BUILD)/libvkcu.a
	@mkdir -p $(@D)
	@echo "LINK $@"
	@$(CC) $(CFLAGS) -fsanitize=fuzzer -Itests/fuzz -MMD -MP -MT $@ -MF $@.d -o $@ $< $(BUILD)/libvkcu.a $(LDLIBS)

test-asan: $(BUILD)/deps.mk
	@$(MAKE) --no-print-directory media
	@mkdir -p $(ASAN_BUILD) && cp -p $(BUILD)/deps.mk $(ASAN_BUILD)/deps.mk
	@CFLAGS="$(SAN_FLAGS)" $(MAKE) --no-print-directory BUILD=$(ASAN_BUILD) CU_BUILD=$(BUILD) all
	@bash tests/asan/run.sh $(ASAN_BUILD)

fuzz-build: $(BUILD)/deps.mk
	@bash tests/fuzz/clang.sh
	@mkdir -p $(FUZZ_BUILD) && cp -p $(BUILD)/deps.mk $(FUZZ_BUILD)/deps.mk
	@CFLAGS="$(SAN_FLAGS) -fsanitize=fuzzer-no-link" $(MAKE) --no-print-directory CC=clang BUILD=$(FUZZ_BUILD) \
		CU_BUILD=$(BUILD) $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/libfuzzer/%)

fuzz: fuzz-build
	@bash tests/fuzz/run.sh $(FUZZ_BUILD)/libfuzzer $(FUZZ_SECONDS) $(FUZZ_TARGETS)
