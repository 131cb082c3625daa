# fusec: the two commands for a fresh machine are `make demo` and `make check`.
BUILD ?= build
CMAKE_FLAGS ?= -DFUSEC_WERROR=ON
JOBS ?= $(shell nproc)

.PHONY: all setup configure build check demo fuzz format clean dist

all: build

setup:
	@scripts/setup.sh

$(BUILD)/build.ninja:
	cmake -G Ninja -S . -B $(BUILD) $(CMAKE_FLAGS)

configure: setup $(BUILD)/build.ninja

build: configure
	ninja -C $(BUILD) -j $(JOBS)

check: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Converts the BERT-shaped encoder layer to a model file and runs it on the
# CPU reference executor.
demo: build
	mkdir -p $(BUILD)/demo
	$(BUILD)/tools/fusec convert examples/bert_layer.fir $(BUILD)/demo/bert_layer.fb
	$(BUILD)/tools/fusec run $(BUILD)/demo/bert_layer.fb --dim=batch=1,seq=128 --seed=1

# Runs each libFuzzer target (built with clang in build-fuzz): the parser and
# the loader for FUZZ_SECONDS each, the compile path for FUZZ_COMPILE_SECONDS
# (at least 60; plus a third of that on big modules) and FUZZ_PTX_SECONDS to
# PTX (test/fuzz/run-fuzzers.sh).
FUZZ_SECONDS ?= 60
FUZZ_COMPILE_SECONDS ?= $(shell echo $$(( $(FUZZ_SECONDS) > 60 ? $(FUZZ_SECONDS) : 60 )))
FUZZ_PTX_SECONDS ?= 60
fuzz: setup
	test/fuzz/run-fuzzers.sh $(FUZZ_SECONDS) $(FUZZ_COMPILE_SECONDS) $(FUZZ_PTX_SECONDS)

# A Release install into dist/ (bin, lib, share/fusec) with LLVM linked
# statically into libfusec: copy it to a GPU machine that has a driver but
# neither LLVM 19 nor flatbuffers, and run dist/bin/fusec there.
DIST_BUILD ?= build-dist
dist: setup
	cmake -G Ninja -S . -B $(DIST_BUILD) -DCMAKE_BUILD_TYPE=Release -DFUSEC_STATIC_LLVM=ON -DFUSEC_WERROR=OFF \
	  -DCMAKE_INSTALL_PREFIX=$(CURDIR)/dist
	ninja -C $(DIST_BUILD) -j $(JOBS) fusec fusec-bin fusec-opt fusec-gpu-tests fusec-embed-example
	rm -rf dist
	cmake --install $(DIST_BUILD)

format:
	clang-format -i $$(git ls-files '*.cpp' '*.h')

clean:
	rm -rf $(BUILD)
