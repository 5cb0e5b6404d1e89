# vkcu: GPU video post-processing (FFmpeg Vulkan Video decode -> CUDA).
# Entry points: deps all test test-gpu demo bench install clean.
# Sources are found by wildcard: a new file in src/ or kernels/ needs no edit here.

BUILD  ?= build
# CU_BUILD: where CUDA objects go. Sanitizer and fuzz builds (test-asan, fuzz)
# keep their C objects apart but share the plain nvcc objects of build/.
CU_BUILD ?= $(BUILD)
PREFIX ?= /usr/local
CUDA   ?= /usr/local/cuda
NVCC   ?= $(CUDA)/bin/nvcc
CC     ?= cc

-include $(BUILD)/deps.mk

PKGS := libavformat libavcodec libswscale libavutil
PKG  := PKG_CONFIG_PATH=$(FFMPEG_PKG_CONFIG_PATH) pkg-config
FF_CFLAGS = $(shell $(PKG) --cflags $(PKGS) 2>/dev/null)
FF_LIBS   = $(shell $(PKG) --static --libs $(PKGS) 2>/dev/null)
# jansson linked statically: the GPU machine has no libjansson.so
JSON_CFLAGS = $(shell pkg-config --cflags jansson 2>/dev/null)
JSON_LIBS   = $(shell pkg-config --variable=libdir jansson 2>/dev/null)/libjansson.a

# libvmaf (optional: `compare --vmaf`, manifest key min-vmaf). Debian has no
# libvmaf package: build it outside the checkout (docs/regression.md, VMAF)
# and name its prefix, `make VMAF_PREFIX=DIR`, or let pkg-config find it
# (PKG_CONFIG_PATH). VMAF=yes fails without it, VMAF=no leaves it out. Only src/regress/vmaf.c
# depends on it; $(BUILD)/vmaf.mk records the choice (tests read it) and
# rebuilds that file when it changes.
VMAF ?= auto
VMAF_PREFIX ?=
VMAF_PKG := PKG_CONFIG_PATH=$(if $(VMAF_PREFIX),$(VMAF_PREFIX)/lib/pkgconfig:$(VMAF_PREFIX)/lib/x86_64-linux-gnu/pkgconfig:$(VMAF_PREFIX)/lib64/pkgconfig:)$(PKG_CONFIG_PATH) pkg-config
ifneq ($(VMAF),no)
VMAF_VERSION := $(shell $(VMAF_PKG) --exists 'libvmaf >= 2.0.0' 2>/dev/null && $(VMAF_PKG) --modversion libvmaf)
endif
ifneq ($(VMAF_VERSION),)
VMAF_LIBDIR := $(shell $(VMAF_PKG) --variable=libdir libvmaf)
VMAF_CFLAGS := -DHAVE_LIBVMAF $(shell $(VMAF_PKG) --cflags libvmaf)
# Static when there is an archive: the GPU machine has no libvmaf.so. It is
# partly C++ (its SVM); -lstdc++ is in LDLIBS already.
VMAF_LIBS := $(if $(wildcard $(VMAF_LIBDIR)/libvmaf.a),$(VMAF_LIBDIR)/libvmaf.a,$(shell $(VMAF_PKG) --libs libvmaf))
else ifneq ($(VMAF),no)
ifneq ($(VMAF_PREFIX),)
$(error VMAF_PREFIX=$(VMAF_PREFIX): no libvmaf >= 2.0.0 there (expected DIR/lib/pkgconfig/libvmaf.pc; docs/regression.md, VMAF))
else ifeq ($(VMAF),yes)
$(error VMAF=yes: pkg-config finds no libvmaf >= 2.0.0 (set VMAF_PREFIX=DIR; docs/regression.md, VMAF))
endif
endif
VMAF_STATE := VMAF_VERSION := $(VMAF_VERSION)|VMAF_PREFIX := $(if $(VMAF_VERSION),$(shell $(VMAF_PKG) --variable=prefix libvmaf))|VMAF_LIBS := $(VMAF_LIBS)

WARN    := -Wall -Wextra -Wshadow -Wmissing-prototypes -Werror
CFLAGS  ?= -O2 -g
CFLAGS  += -std=c11 -D_GNU_SOURCE -pthread $(WARN) -Isrc -I. -I$(VK_HEADERS) -I$(CUDA)/include $(FF_CFLAGS) $(JSON_CFLAGS)
NVFLAGS ?= -O3
NVFLAGS += -std=c++17 -Werror all-warnings -Xcompiler -Wall,-Wextra -Isrc -I. -I$(VK_HEADERS) $(FF_CFLAGS) \
           -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
LDLIBS  = $(FF_LIBS) $(JSON_LIBS) $(VMAF_LIBS) -L$(CUDA)/lib64 -lcudart_static -lzimg -lstdc++ -ldl -lrt -lm -pthread

# EXCLUDE: sources to leave out of a build (work in progress in a shared tree)
EXCLUDE ?=
C_SRC   := $(filter-out src/cli/%.c $(EXCLUDE),$(wildcard src/*/*.c))
CLI_SRC := $(filter-out $(EXCLUDE),$(wildcard src/cli/*.c))
CU_SRC  := $(wildcard kernels/*.cu src/*.cu src/*/*.cu)
LIB_OBJ := $(C_SRC:%.c=$(BUILD)/obj/%.o) $(CU_SRC:%.cu=$(CU_BUILD)/obj/%.cu.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TEST_SRC := $(wildcard tests/unit/*.c)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
FUZZ_SRC := $(filter-out tests/fuzz/replay.c,$(wildcard tests/fuzz/*.c))
FUZZ_REPLAY := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)
BENCH_SRC := $(wildcard tests/bench/*.c)
BENCH_BIN := $(BENCH_SRC:tests/bench/%.c=$(BUILD)/tests/%)

.PHONY: FORCE all deps test test-gpu demo bench install clean media check-deps man completion
.DEFAULT_GOAL := all

all: check-deps $(BUILD)/vkcu $(BUILD)/libvkcu.a $(TEST_BIN) $(BENCH_BIN) $(FUZZ_REPLAY) man completion

$(BUILD)/deps.mk:
	@bash tools/deps.sh

deps:
	@bash tools/deps.sh

check-deps:
	@test -f $(BUILD)/deps.mk || { echo "vkcu: dependencies not set up: run 'make deps' (or 'make test'/'make demo', which call it)"; exit 1; }

$(BUILD)/libvkcu.a: $(LIB_OBJ)
	@mkdir -p $(@D)
	@echo "AR   $@"; ar rcs $@ $^

$(BUILD)/vkcu: $(CLI_OBJ) $(BUILD)/libvkcu.a
	@echo "LINK $@"
	@$(CC) $(CFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libvkcu.a $(LDLIBS)

# Man pages (vkcu.1, vkcu-VERB.1) and the bash completion script: written
# by vkcu itself from its option table (src/cli/table.c), so they match the
# binary that is installed with them.
man: $(BUILD)/man/vkcu.1
completion: $(BUILD)/completion/vkcu
# A sanitizer build (test-asan) runs its own vkcu here: only text is
# printed, so leak checking at exit has nothing to say about the pages.
GEN_DOC := ASAN_OPTIONS=detect_leaks=0 $(BUILD)/vkcu

$(BUILD)/man/vkcu.1: $(BUILD)/vkcu
	@mkdir -p $(@D)
	@echo "GEN  $(@D)/vkcu*.1"
	@set -e; for v in $$($(GEN_DOC) --generate verbs); do \
	  $(GEN_DOC) --generate man:$$v > $(@D)/vkcu-$$v.1.tmp; mv $(@D)/vkcu-$$v.1.tmp $(@D)/vkcu-$$v.1; done; \
	  $(GEN_DOC) --generate man > $@.tmp; mv $@.tmp $@

$(BUILD)/completion/vkcu: $(BUILD)/vkcu
	@mkdir -p $(@D)
	@echo "GEN  $@"
	@$(GEN_DOC) --generate completion > $@.tmp && mv $@.tmp $@

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libvkcu.a
	@mkdir -p $(@D)
	@echo "LINK $@"
	@$(CC) $(CFLAGS) -Itests -o $@ $< $(BUILD)/libvkcu.a $(LDLIBS)

$(BUILD)/tests/%: tests/bench/%.c $(BUILD)/libvkcu.a
	@mkdir -p $(@D)
	@echo "LINK $@"
	@$(CC) $(CFLAGS) -Itests -Itests/unit -o $@ $< $(BUILD)/libvkcu.a $(LDLIBS)

$(BUILD)/obj/%.o: %.c $(BUILD)/deps.mk
	@mkdir -p $(@D)
	@echo "CC   $<"
	@$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(CU_BUILD)/obj/%.cu.o: %.cu $(CU_BUILD)/deps.mk
	@mkdir -p $(@D)
	@echo "NVCC $<"
	@$(NVCC) $(NVFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/vmaf.mk: FORCE
	@mkdir -p $(@D)
	@printf '%s\n' '$(VMAF_STATE)' | tr '|' '\n' > $@.new; \
	 if cmp -s $@.new $@; then rm -f $@.new; else mv $@.new $@; fi
$(BUILD)/obj/src/regress/vmaf.o: CFLAGS += $(VMAF_CFLAGS)
$(BUILD)/obj/src/regress/vmaf.o: $(BUILD)/vmaf.mk
$(BUILD)/vkcu: $(BUILD)/vmaf.mk
FORCE:

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d)

media: $(BUILD)/deps.mk
	@bash tools/make-media.sh

test: $(BUILD)/deps.mk
	@$(MAKE) --no-print-directory all media
	@bash tests/run.sh

test-gpu: $(BUILD)/deps.mk
	@$(MAKE) --no-print-directory all
	@bash tests/gpu.sh

demo: $(BUILD)/deps.mk
	@$(MAKE) --no-print-directory all media
	@bash tools/demo.sh

bench: $(BUILD)/deps.mk
	@$(MAKE) --no-print-directory all
	@bash tools/bench.sh
	@bash tools/bench-transcode.sh
	@bash tools/bench-batch.sh

install: all
	install -D -m 755 $(BUILD)/vkcu $(DESTDIR)$(PREFIX)/bin/vkcu
	install -D -m 644 $(BUILD)/libvkcu.a $(DESTDIR)$(PREFIX)/lib/libvkcu.a
	install -D -m 644 src/core/vkcu.h $(DESTDIR)$(PREFIX)/include/vkcu/vkcu.h
	install -d $(DESTDIR)$(PREFIX)/share/vkcu/pipelines
	install -m 644 pipelines/*.pipe $(DESTDIR)$(PREFIX)/share/vkcu/pipelines/ 2>/dev/null || true

clean:
	rm -rf $(BUILD)/obj $(BUILD)/vkcu $(BUILD)/libvkcu.a $(BUILD)/tests $(BUILD)/man $(BUILD)/completion

include tests/sanitize.mk
