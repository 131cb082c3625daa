#!/bin/bash
# Everything that needs the GPU, in one call on the GPU machine, run from the
# repository root with dist/ (make dist) beside it:
#   bench/gpu-session.sh [tests] [sanitize] [bench[=NAME,...]] [compare[=NAME,...]]
#                        [convs[=LAYER,...]]
# tests     the GPU test suite (fusec-gpu-tests, every case and example)
# sanitize  compute-sanitizer memcheck and racecheck over a subset of it
# bench     the scoreboard, bench/run.py (BUDGET: its --budget, seconds of
#           torch.compile; FUSEC_COMMIT: the commit it names)
# compare   dist's fusec against BASE (a fusec binary, default
#           gpu-base/bin/fusec) on the scoreboard's rows, both back ends,
#           bench/compare.py
# convs     conv layers one at a time against cuDNN, bench/convs.py
# Logs and results go under $OUT (default /tmp/fusec-gpu); a short summary
# of each step is printed last.
set -u
OUT=${OUT:-/tmp/fusec-gpu}
mkdir -p "$OUT"
export FUSEC_SOURCE_DIR=$PWD
export FUSEC_CACHE_DIR=${FUSEC_CACHE_DIR:-/tmp/fusec-cache}
export PYTHONUNBUFFERED=1
SANITIZER=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
summary=()

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv \
  | tee "$OUT/device.txt"

for step in "${@:-tests bench}"; do
  case $step in
  tests)
    dist/bin/fusec-gpu-tests --gtest_output=xml:"$OUT/gpu-tests.xml" >"$OUT/gpu-tests.log" 2>&1
    summary+=("tests: exit $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$OUT/gpu-tests.log" | tr '\n' ' ')")
    grep -E '^\[  FAILED  \]|Failure|error' "$OUT/gpu-tests.log" | head -40
    ;;
  sanitize)
    for tool in memcheck racecheck; do
      "$SANITIZER" --tool $tool --error-exitcode 99 dist/bin/fusec-gpu-tests \
        --gtest_filter='*_n7_*:*_rows7_*:*_s7_*:*batch1_seq1*:*_m7*:*conv_relu_pool_fp32*-*llama_layer*' \
        >"$OUT/sanitize-$tool.log" 2>&1
      summary+=("sanitize $tool: exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize-$tool.log" | tail -1)")
    done
    ;;
  compare*)
    only=${step#compare}; only=${only#=}
    python3 bench/compare.py --base "${BASE:-gpu-base/bin/fusec}" --new dist/bin/fusec --llvm \
      ${ROUNDS:+--rounds "$ROUNDS"} \
      --out "$OUT/compare" ${only:+--only "$only"} 2>&1 | tee "$OUT/compare.log" | tail -4
    summary+=("compare: exit ${PIPESTATUS[0]}")
    ;;
  convs*)
    only=${step#convs}; only=${only#=}
    python3 bench/convs.py --fusec dist/bin/fusec --out "$OUT/convs" ${only:+--only "$only"} \
      2>&1 | tee "$OUT/convs.log" | tail -20
    summary+=("convs: exit ${PIPESTATUS[0]}")
    ;;
  bench*)
    only=${step#bench}; only=${only#=}
    python3 bench/run.py --fusec dist/bin/fusec --out "$OUT/bench" ${only:+--only "$only"} \
      ${BUDGET:+--budget "$BUDGET"} \
      2>&1 | tee "$OUT/bench.log" | tail -20
    summary+=("bench: exit ${PIPESTATUS[0]}")
    ;;
  esac
done
printf '%s\n' "${summary[@]}"
