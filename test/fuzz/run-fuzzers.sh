#!/usr/bin/env bash
# Builds the libFuzzer targets in build-fuzz (clang-19, ASan + UBSan) and runs
# each for SECONDS (default 60) from its seed corpus, after replaying every
# saved regression input once. Fails on any crash, leak, timeout, sanitizer
# report or round-trip oracle failure; libFuzzer leaves the input that did it
# in build-fuzz/test/fuzz/artifacts/ (save it under regressions/ once fixed).
#
#   test/fuzz/run-fuzzers.sh [SECONDS]
set -euo pipefail

seconds=${1:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build-fuzz
fuzz=$build/test/fuzz

CC=clang-19 CXX=clang++-19 cmake -G Ninja -S "$root" -B "$build" -DFUSEC_FUZZ=ON >/dev/null
ninja -C "$build" -j2 fuzz-fir-parser fuzz-model-loader fuzz-seeds

# fuzz NAME REGRESSIONS CORPUS... [-- LIBFUZZER-FLAGS...]
fuzz() {
  local name=$1 regressions=$2
  shift 2
  local corpora=() flags=()
  while (($#)) && [[ $1 != -- ]]; do corpora+=("$1"); shift; done
  (($#)) && shift && flags=("$@")
  local work=$fuzz/work/$name
  mkdir -p "$work" "$fuzz/artifacts"
  if compgen -G "$regressions/*" >/dev/null; then
    echo "== $name: replaying $regressions"
    "$fuzz/$name" "${flags[@]}" "$regressions"/*
  fi
  echo "== $name: fuzzing for ${seconds}s"
  "$fuzz/$name" "${flags[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$fuzz/artifacts/$name-" "$work" "${corpora[@]}"
}

fuzz fuzz-fir-parser "$root/test/fuzz/regressions/fir" \
  "$root/test/fuzz/corpus/fir" "$root/examples" -- -dict="$root/test/fuzz/fir.dict"
fuzz fuzz-model-loader "$root/test/fuzz/regressions/fb" "$fuzz/corpus/fb"
echo "run-fuzzers: no failures in ${seconds}s per fuzzer"
