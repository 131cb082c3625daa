#!/usr/bin/env bash
# Builds the libFuzzer targets in build-fuzz (clang-19, ASan + UBSan) and runs
# each from its seed corpus, after replaying every saved regression input
# once. Fails on any crash, leak, timeout, sanitizer report or oracle
# failure; libFuzzer leaves the input that did it in
# build-fuzz/test/fuzz/artifacts/ (save it under regressions/ once fixed;
# `fuzz-compile-gen FILE` prints the module a compile-path input makes).
#
#   test/fuzz/run-fuzzers.sh [SECONDS [COMPILE_SECONDS [PTX_SECONDS]]]
#
# SECONDS (default 60) each for the parser and the model loader (a third of it
# for the tuning-cache entry);
# COMPILE_SECONDS (default SECONDS, at least 60) for the compile path
# (fuzz-compile), then a third of that for big modules (fuzz-compile --big:
# a long chain or a wide concat, each within 20 s); PTX_SECONDS (default
# 60) for fuzz-compile-ptx, which compiles the kernels of the inputs
# fuzz-compile kept to PTX (NVRTC, LLVM's NVPTX back end, ptxas) where the
# CUDA toolkit is installed.
set -euo pipefail

seconds=${1:-60}
compile_seconds=${2:-$((seconds > 60 ? seconds : 60))}
ptx_seconds=${3:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build-fuzz
fuzz=$build/test/fuzz

CC=clang-19 CXX=clang++-19 cmake -G Ninja -S "$root" -B "$build" -DFUSEC_FUZZ=ON >/dev/null
ninja -C "$build" -j"$(nproc)" fuzz-fir-parser fuzz-model-loader fuzz-seeds fuzz-compile \
  fuzz-compile-ptx fuzz-compile-gen fuzz-tuning-entry

# fuzz NAME[:VARIANT] SECONDS REGRESSIONS CORPUS... [-- FLAGS...]: FLAGS (the
# target's own, or libFuzzer's over the defaults) go to every run of NAME.
fuzz() {
  local name=$1 time=$2 regressions=$3
  shift 3
  local corpora=() flags=()
  while (($#)) && [[ $1 != -- ]]; do corpora+=("$1"); shift; done
  (($#)) && shift && flags=("$@")
  local binary=${name%%:*} work=$fuzz/work/${name//:/-}
  mkdir -p "$work" "$fuzz/artifacts"
  if compgen -G "$regressions/*" >/dev/null; then
    echo "== $name: replaying $regressions"
    "$fuzz/$binary" "${flags[@]}" "$regressions"/*
  fi
  echo "== $name: fuzzing for ${time}s"
  "$fuzz/$binary" -max_total_time="$time" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$fuzz/artifacts/${name//:/-}-" "${flags[@]}" "$work" "${corpora[@]}"
}

fuzz fuzz-fir-parser "$seconds" "$root/test/fuzz/regressions/fir" \
  "$root/test/fuzz/corpus/fir" "$root/examples" -- -dict="$root/test/fuzz/fir.dict"
fuzz fuzz-model-loader "$seconds" "$root/test/fuzz/regressions/fb" "$fuzz/corpus/fb"
fuzz fuzz-tuning-entry $((seconds / 3 + 1)) "$root/test/fuzz/regressions/tuning" \
  "$root/test/fuzz/corpus/tuning"

# Seeds for the compile path: random inputs of full-sized modules (the
# generator reads any bytes; short ones make tiny modules). Few big ones:
# libFuzzer runs every seed before it looks at the clock, and a big module
# takes seconds (these 8: chains of 1,349 to 5,568 ops, concats of 1,494 to
# 5,231 operands).
mkdir -p "$fuzz/corpus/compile" "$fuzz/corpus/compile-big"
"$fuzz/fuzz-compile-gen" --seeds=100 --seed=1 "$fuzz/corpus/compile"
"$fuzz/fuzz-compile-gen" --seeds=8 --seed=2 "$fuzz/corpus/compile-big"
fuzz fuzz-compile "$compile_seconds" "$root/test/fuzz/regressions/compile" "$fuzz/corpus/compile"
# Big modules take 0.5-3 s each under ASan on an idle 2-core machine (a
# 5,568-op chain 3.1 s); before fusion was near-linear a 4,252-op chain took
# more than 15 s, so -timeout=20 catches that and leaves room for a loaded
# machine.
fuzz fuzz-compile:big $((compile_seconds / 3)) "$root/test/fuzz/regressions/compile-big" \
  "$fuzz/corpus/compile-big" -- --big -timeout=20
# libFuzzer runs every seed before it looks at the clock: the PTX run starts
# from a sample of what fuzz-compile kept (an input takes about a second).
rm -rf "$fuzz/corpus/compile-ptx" && mkdir -p "$fuzz/corpus/compile-ptx"
find "$fuzz/work/fuzz-compile" -type f | sort | shuf -n $((ptx_seconds / 3 + 1)) \
  --random-source=<(yes) | xargs -r cp -t "$fuzz/corpus/compile-ptx"
fuzz fuzz-compile-ptx "$ptx_seconds" "$root/test/fuzz/regressions/compile" \
  "$fuzz/corpus/compile-ptx" -- -timeout=60
echo "run-fuzzers: no failures (${seconds}s for the parser and the loader," \
  "${compile_seconds}s and $((compile_seconds / 3))s for the compile path, ${ptx_seconds}s to PTX)"
