# SPDX-License-Identifier: GPL-2.0-or-later
# vkcu: GPU video post-processing (FFmpeg Vulkan Video decode -> CUDA).
# Entry points: deps all test test-gpu demo bench install uninstall clean.
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

# Objects remember the flags they were built with (obj/.cflags, obj/.nvflags):
# when the flags change (another CUDA_ARCHS, -fPIC added) the objects they make
# stale are removed here, so that they are rebuilt rather than linked with the
# others into a library of two builds. A copied obj/ carries its record.
# 1: record, 2: flags, 3: the objects' suffix, 4: other suffix to keep
define flags_record
ifneq ($$(strip $(2)),$$(shell cat $(1) 2>/dev/null))
$$(shell mkdir -p $$(dir $(1)) && find $$(dir $(1)) -name '*$(3)' $(if $(4),! -name '*$(4)') -delete; \
	printf '%s\n' '$$(strip $(2))' > $(1))
endif
endef

PKGS := libavformat libavcodec libswscale libavutil
# The bundled FFmpeg lies in the cache, never under a sysroot.
PKG  := PKG_CONFIG_SYSROOT_DIR= PKG_CONFIG_PATH=$(FFMPEG_PKG_CONFIG_PATH) pkg-config
FF_CFLAGS = $(shell $(PKG) --cflags $(PKGS) 2>/dev/null)
FF_LIBS   = $(shell $(PKG) --static --libs $(PKGS) 2>/dev/null)
# jansson linked statically: the GPU machine has no libjansson.so
JSON_CFLAGS = $(shell pkg-config --cflags jansson 2>/dev/null)
JSON_LIBS   = $(shell pkg-config --variable=libdir jansson 2>/dev/null)/libjansson.a

# libvmaf (optional: `compare --vmaf`, manifest key min-vmaf). Debian has no
# libvmaf package: build it outside the checkout (docs/regression.md, VMAF)
# and name its prefix, `make VMAF_PREFIX=DIR`, or let pkg-config find it
# (PKG_CONFIG_PATH). VMAF=yes fails without it, VMAF=no leaves it out. Only
# src/regress/vmaf.c, vmaf_cuda.c and vmaf_layout.c depend on it; $(BUILD)/vmaf.mk records
# the choice (tests read it) and rebuilds those files when it changes.
VMAF ?= auto
VMAF_PREFIX ?=
VMAF_PKG := PKG_CONFIG_PATH=$(if $(VMAF_PREFIX),$(VMAF_PREFIX)/lib/pkgconfig:$(VMAF_PREFIX)/lib/x86_64-linux-gnu/pkgconfig:$(VMAF_PREFIX)/lib64/pkgconfig:)$(PKG_CONFIG_PATH) pkg-config
ifneq ($(VMAF),no)
VMAF_VERSION := $(shell $(VMAF_PKG) --exists 'libvmaf >= 2.0.0' 2>/dev/null && $(VMAF_PKG) --modversion libvmaf)
endif
ifneq ($(VMAF_VERSION),)
VMAF_LIBDIR := $(shell $(VMAF_PKG) --variable=libdir libvmaf)
# Its CUDA backend (tools/deps.sh builds it where nvcc is; VKCU_VMAF_CUDA
# there) installs libvmaf_cuda.h, and only then: vmaf_cuda.c scores on the
# GPU. It loads libcuda at run time, so nothing more is linked.
VMAF_CUDA := $(if $(wildcard $(shell $(VMAF_PKG) --variable=includedir libvmaf)/libvmaf/libvmaf_cuda.h),1,0)
VMAF_CFLAGS := -DHAVE_LIBVMAF $(if $(filter 1,$(VMAF_CUDA)),-DHAVE_LIBVMAF_CUDA) $(shell $(VMAF_PKG) --cflags libvmaf)
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
VMAF_STATE := VMAF_VERSION := $(VMAF_VERSION)|VMAF_PREFIX := $(if $(VMAF_VERSION),$(shell $(VMAF_PKG) --variable=prefix libvmaf))|VMAF_LIBS := $(VMAF_LIBS)|VMAF_CUDA := $(if $(VMAF_VERSION),$(VMAF_CUDA),0)

WARN    := -Wall -Wextra -Wshadow -Wmissing-prototypes -Werror
# Hidden by default: libvkcu exports only what include/vkcu/ declares with
# VKCU_API (tests/cli/api-symbols.sh checks it).
VISIBILITY := -fvisibility=hidden
CFLAGS  ?= -O2 -g
# One set of position-independent objects serves libvkcu.a and libvkcu.so
# (docs/install.md, Building: why not two).
CFLAGS  += -fPIC -std=c11 -D_GNU_SOURCE -pthread $(WARN) $(VISIBILITY) -Iinclude -Isrc -I. -I$(VK_HEADERS) -I$(CUDA)/include $(FF_CFLAGS) $(JSON_CFLAGS)
# CUDA_ARCHS: the GPUs the kernels are built for, as machine code (SASS), and
# PTX of the highest so that GPUs newer than the list compile it at first
# start. The default is every x86-64 GPU architecture of CUDA 13.0's
# `nvcc --list-gpu-code`, fixed here so that a build does not change with the
# toolkit: T4/RTX 20 (75), A100 (80), RTX 30 (86), L4/L40/RTX 40 (89),
# H100/H200 (90), B200 (100), B300 (103), RTX 50/RTX PRO (120). Left out:
# 87, 110 and 121, the aarch64 boards (Jetson Orin, Thor, DGX Spark), and 88,
# an Ampere variant that 86's code serves (machine code runs on later minors
# of its major). `make CUDA_ARCHS=90` narrows it; each entry costs compile
# time (docs/install.md; tests/cli/cuda-archs.sh checks the list against nvcc).
CUDA_ARCHS ?= 75 80 86 89 90 100 103 120
CUDA_ARCHS_N := $(shell printf '%s\n' $(CUDA_ARCHS) | sort -nu)
NV_GENCODE := $(foreach a,$(CUDA_ARCHS_N),-gencode arch=compute_$(a),code=sm_$(a)) \
              -gencode arch=compute_$(lastword $(CUDA_ARCHS_N)),code=compute_$(lastword $(CUDA_ARCHS_N))
# nvcc compiles a source's architectures one after the other unless told to
# run them in parallel (--threads; 0: one per CPU): kernels/convert.cu alone
# is most of a build, so on two cores this halves a cold build's wall time.
NVCC_THREADS ?= 0
NVFLAGS ?= -O3
NVFLAGS += --threads $(NVCC_THREADS) -std=c++17 -Werror all-warnings -Xcompiler -Wall,-Wextra,-fPIC,$(VISIBILITY) -Iinclude -Isrc -I. -I$(VK_HEADERS) $(FF_CFLAGS) \
           $(NV_GENCODE)
LDLIBS  = $(FF_LIBS) $(JSON_LIBS) $(VMAF_LIBS) -L$(CUDA)/lib64 -lcudart_static -lzimg -lstdc++ -ldl -lrt -lm -pthread
# libvkcu.so: Debian's libjansson.a is not position-independent, so the shared
# library links jansson's shared object (a dependency any package manager meets).
SO_LDLIBS = $(FF_LIBS) $(shell pkg-config --libs jansson 2>/dev/null) $(VMAF_LIBS) \
            -L$(CUDA)/lib64 -lcudart_static -lstdc++ -ldl -lrt -lm -pthread

# The library's version: include/vkcu/version.h when it names one. The
# soname carries the major number; a new major is a new ABI.
VKCU_VERSION := $(shell sed -n 's/^\#define VKCU_VERSION_\(MAJOR\|MINOR\|PATCH\) *\([0-9]*\).*/\2/p' \
                  include/vkcu/version.h 2>/dev/null | paste -sd.)
VKCU_VERSION := $(or $(VKCU_VERSION),1.0.0)
VKCU_MAJOR   := $(firstword $(subst ., ,$(VKCU_VERSION)))
SONAME       := libvkcu.so.$(VKCU_MAJOR)

# EXCLUDE: sources to leave out of a build (work in progress in a shared tree)
EXCLUDE ?=
C_SRC   := $(filter-out src/cli/%.c $(EXCLUDE),$(wildcard src/*/*.c))
CLI_SRC := $(filter-out $(EXCLUDE),$(wildcard src/cli/*.c))
CU_SRC  := $(wildcard kernels/*.cu src/*.cu src/*/*.cu)
LIB_OBJ := $(C_SRC:%.c=$(BUILD)/obj/%.o) $(CU_SRC:%.cu=$(CU_BUILD)/obj/%.cu.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
# Library sources the command line needs too: util/near.c ("did you mean").
# src/cli/ may include only the public headers and itself, and libvkcu.so
# exports only the API, so vkcu links an object of its own made from the
# same source, with the functions renamed cli_* (vkcu defines no vkcu_
# symbol: tests/cli/api-symbols.sh); src/cli/opts.h declares them.
CLI_SHARED := src/util/near.c
CLI_SHARED_RENAME := -Dvkcu_edit_distance=cli_edit_distance -Dvkcu_nearest_word=cli_nearest_word
CLI_OBJ += $(CLI_SHARED:src/util/%.c=$(BUILD)/obj/cli-shared/%.o)
TEST_SRC := $(wildcard tests/unit/*.c)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
FUZZ_SRC := $(filter-out tests/fuzz/replay.c,$(wildcard tests/fuzz/*.c))
FUZZ_REPLAY := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)
BENCH_SRC := $(wildcard tests/bench/*.c)
BENCH_BIN := $(BENCH_SRC:tests/bench/%.c=$(BUILD)/tests/%)

.PHONY: FORCE all deps test test-gpu demo bench install uninstall print-version print-cuda-archs clean media check-deps man completion
.DEFAULT_GOAL := all

all: check-deps $(BUILD)/vkcu $(BUILD)/libvkcu.a $(BUILD)/libvkcu.so $(BUILD)/libvkcu-prof.so $(TEST_BIN) $(BENCH_BIN) $(FUZZ_REPLAY) man completion

$(BUILD)/deps.mk:
	@bash tools/deps.sh

deps:
	@bash tools/deps.sh

check-deps:
	@test -f $(BUILD)/deps.mk || { echo "vkcu: dependencies not set up: run 'make deps' (or 'make test'/'make demo', which call it)"; exit 1; }

# Made anew each time: `ar r` into the old archive would keep the object of a
# source that was removed or renamed, and link it beside its successor.
$(BUILD)/libvkcu.a: $(LIB_OBJ)
	@mkdir -p $(@D)
	@echo "AR   $@"; rm -f $@ && ar rcs $@ $^

# The shared library holds the bundled FFmpeg (static, built with --enable-pic)
# and CUDA's static runtime; --exclude-libs keeps their symbols inside, so a
# program may use its own FFmpeg beside libvkcu.so. -z defs: every symbol the
# library needs is resolved now, not at a user's first call. (FFmpeg's x86
# assembly refers to its tables PC-relatively; that links because
# --exclude-libs makes those symbols local.)
$(BUILD)/libvkcu.so.$(VKCU_VERSION): $(LIB_OBJ) $(BUILD)/vmaf.mk
	@mkdir -p $(@D)
	@echo "LINK $@"
	@$(CC) $(CFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,--exclude-libs,ALL -Wl,-z,defs \
		-o $@ $(LIB_OBJ) $(SO_LDLIBS)
$(BUILD)/libvkcu.so: $(BUILD)/libvkcu.so.$(VKCU_VERSION)
	@ln -sf $(<F) $(BUILD)/$(SONAME)
	@ln -sf $(SONAME) $@

# vkcu is a client of libvkcu like any program (src/cli/ includes only the
# public headers): it links libvkcu.so and finds it by an rpath relative to
# itself, beside it in the build folder and in LIBDIR seen from BINDIR once
# installed (../lib by default), so that a DESTDIR stage, a moved prefix and
# the GPU bundle (tools/gpu-bundle.sh) run too. DT_RPATH rather than
# RUNPATH: LD_LIBRARY_PATH cannot pair this vkcu with another libvkcu.
# $(BUILD)/rpath.mk records the rpath, so that an install to other folders
# links it again.
VKCU_RPATH = $$ORIGIN/$(shell realpath -m --relative-to='$(BINDIR)' '$(LIBDIR)'):$$ORIGIN
$(BUILD)/vkcu: $(CLI_OBJ) $(BUILD)/libvkcu.so $(BUILD)/rpath.mk
	@echo "LINK $@"
	@$(CC) $(CFLAGS) -o $@ $(CLI_OBJ) -L$(BUILD) -lvkcu -Wl,--disable-new-dtags -Wl,-rpath,'$(VKCU_RPATH)'
$(BUILD)/rpath.mk: FORCE
	@mkdir -p $(@D)
	@printf '%s\n' 'VKCU_RPATH := $(VKCU_RPATH)' > $@.new; \
	 if cmp -s $@.new $@; then rm -f $@.new; else mv $@.new $@; fi

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

# vkcu-prof (tools/prof/): an LD_PRELOAD library, so its pthread functions
# must be visible (no -fvisibility=hidden) and it links nothing of vkcu's.
$(BUILD)/libvkcu-prof.so: tools/prof/vkcu-prof.c
	@mkdir -p $(@D)
	@echo "CC   $@"
	@$(CC) -O2 -g -std=c11 $(WARN) -fPIC -shared -pthread -o $@ $< -ldl

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libvkcu.a
	@mkdir -p $(@D)
	@echo "LINK $@"
	@$(CC) $(CFLAGS) -Itests -MMD -MP -MT $@ -MF $@.d -o $@ $< $(BUILD)/libvkcu.a $(LDLIBS)

$(BUILD)/tests/%: tests/bench/%.c $(BUILD)/libvkcu.a
	@mkdir -p $(@D)
	@echo "LINK $@"
	@$(CC) $(CFLAGS) -Itests -Itests/unit -MMD -MP -MT $@ -MF $@.d -o $@ $< $(BUILD)/libvkcu.a $(LDLIBS)

$(BUILD)/obj/%.o: %.c $(BUILD)/deps.mk
	@mkdir -p $(@D)
	@echo "CC   $<"
	@$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/obj/cli-shared/%.o: src/util/%.c $(BUILD)/deps.mk
	@mkdir -p $(@D)
	@echo "CC   $< (for vkcu)"
	@$(CC) $(CFLAGS) $(CLI_SHARED_RENAME) -MMD -MP -c -o $@ $<

$(CU_BUILD)/obj/%.cu.o: %.cu $(CU_BUILD)/deps.mk
	@mkdir -p $(@D)
	@echo "NVCC $<"
	@$(NVCC) $(NVFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/vmaf.mk: FORCE
	@mkdir -p $(@D)
	@printf '%s\n' '$(VMAF_STATE)' | tr '|' '\n' > $@.new; \
	 if cmp -s $@.new $@; then rm -f $@.new; else mv $@.new $@; fi
$(BUILD)/obj/src/regress/vmaf.o $(BUILD)/obj/src/regress/vmaf_cuda.o $(BUILD)/obj/src/regress/vmaf_layout.o: CFLAGS += $(VMAF_CFLAGS)
$(BUILD)/obj/src/regress/vmaf.o $(BUILD)/obj/src/regress/vmaf_cuda.o $(BUILD)/obj/src/regress/vmaf_layout.o: $(BUILD)/vmaf.mk
FORCE:

ifeq ($(filter clean deps uninstall print-%,$(MAKECMDGOALS)),)
# A wrong CUDA_ARCHS stops here, in one line, rather than in every nvcc run.
NV_CODES := $(patsubst sm_%,%,$(shell $(NVCC) --list-gpu-code 2>/dev/null))
ifeq ($(strip $(CUDA_ARCHS)),)
$(error CUDA_ARCHS is empty: name the GPU architectures to build for, e.g. CUDA_ARCHS=90 (docs/install.md))
endif
ifneq ($(and $(NV_CODES),$(filter-out $(NV_CODES),$(CUDA_ARCHS))),)
$(error CUDA_ARCHS: $(filter-out $(NV_CODES),$(CUDA_ARCHS)): not a GPU architecture that $(NVCC) builds for (it knows $(NV_CODES)); see docs/install.md)
endif
$(eval $(call flags_record,$(BUILD)/obj/.cflags,$(CC) $(CFLAGS),.o,.cu.o))
$(eval $(call flags_record,$(CU_BUILD)/obj/.nvflags,$(NVCC) $(NVFLAGS),.cu.o))
endif

# Test programs are built from source in one step; their .d files sit beside them.
-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_BIN:=.d) $(BENCH_BIN:=.d) $(FUZZ_REPLAY:=.d)

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
	@bash tools/bench-verify.sh
	@bash tools/bench-compare.sh
	@bash tools/bench-python.sh

# Installation folders (docs/install.md); DESTDIR stages the whole tree.
BINDIR      ?= $(PREFIX)/bin
LIBDIR      ?= $(PREFIX)/lib
INCLUDEDIR  ?= $(PREFIX)/include
DATADIR     ?= $(PREFIX)/share
MANDIR      ?= $(DATADIR)/man
DOCDIR      ?= $(DATADIR)/doc/vkcu
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
# The Python package: empty, the folder the system's python3 reads for PREFIX
# (tools/install.sh, python_dir); PYTHON: that interpreter (default python3).
PYTHONDIR   ?=
PYTHON      ?=

# vkcu.pc. libvkcu.so needs nothing more than -lvkcu; a static link needs
# what libvkcu.a leaves out. The bundled FFmpeg is not a system library, so
# its static archives are installed privately in LIBDIR/vkcu and named here
# (a system FFmpeg is named through Requires.private instead).
FFMPEG_BUNDLED_LIBS := $(if $(FFMPEG_PREFIX),$(wildcard $(patsubst -l%,$(FFMPEG_PREFIX)/lib/lib%.a,$(filter -l%,$(FF_LIBS)))))
# jansson as -ljansson, not Requires.private: its Cflags would add
# -I/usr/include (under a sysroot, a folder that is not there).
PC_REQUIRES := $(if $(FFMPEG_PREFIX),,$(PKGS))
PC_LIBS     := $(if $(FFMPEG_PREFIX),$(patsubst -L$(FFMPEG_PREFIX)/lib,-L$${libdir}/vkcu,$(FF_LIBS))) \
               -ljansson $(VMAF_LIBS) -L$(CUDA)/lib64 -lcudart_static -lstdc++ -ldl -lrt -lm -pthread
pc_path = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))
$(BUILD)/vkcu.pc: tools/vkcu.pc.in FORCE
	@mkdir -p $(@D)
	@sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(call pc_path,$(LIBDIR))|' \
	     -e 's|@INCLUDEDIR@|$(call pc_path,$(INCLUDEDIR))|' -e 's|@VERSION@|$(VKCU_VERSION)|' \
	     -e 's|@REQUIRES_PRIVATE@|$(strip $(PC_REQUIRES))|' -e 's|@LIBS_PRIVATE@|$(strip $(PC_LIBS))|' \
	     -e '/^# SPDX/d' $< > $@.new; \
	 if cmp -s $@.new $@; then rm -f $@.new; else mv $@.new $@; fi

INSTALL_ENV = BUILD='$(BUILD)' PREFIX='$(PREFIX)' DESTDIR='$(DESTDIR)' BINDIR='$(BINDIR)' LIBDIR='$(LIBDIR)' \
	INCLUDEDIR='$(INCLUDEDIR)' DATADIR='$(DATADIR)' MANDIR='$(MANDIR)' DOCDIR='$(DOCDIR)' \
	BASHCOMPDIR='$(BASHCOMPDIR)' VKCU_VERSION='$(VKCU_VERSION)' SONAME='$(SONAME)' \
	FFMPEG_BUNDLED_LIBS='$(FFMPEG_BUNDLED_LIBS)' PYTHONDIR='$(PYTHONDIR)' PYTHON='$(PYTHON)'

install: all $(BUILD)/vkcu.pc
	@$(INSTALL_ENV) bash tools/install.sh install

uninstall:
	@$(INSTALL_ENV) bash tools/install.sh uninstall

print-version:
	@echo $(VKCU_VERSION)
print-cuda-archs:
	@echo $(CUDA_ARCHS_N)

clean:
	rm -rf $(BUILD)/obj $(BUILD)/vkcu $(BUILD)/libvkcu.a $(BUILD)/libvkcu.so* $(BUILD)/vkcu.pc $(BUILD)/tests $(BUILD)/man $(BUILD)/completion

include tests/sanitize.mk
