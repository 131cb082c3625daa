#!/bin/bash
# The hardening regressions of issue 11 run on the GPU (dist/ from make dist),
# each compared with the CPU reference on fresh random inputs, on both back
# ends: kernels named alike, constant tables in row kernels, empty constants,
# a 5,000-operand concat and a 600-input sum (split to fit the parameter
# space), f64 operands with an f32 accumulator, and an artifact run.
#   bench/gpu-hardening.sh      (logs under $OUT, default /tmp/fusec-gpu)
set -u
OUT=${OUT:-/tmp/fusec-gpu}
mkdir -p "$OUT/hardening"
work=$OUT/hardening
fusec=${FUSEC:-dist/bin/fusec}
python3 bench/pipeline-scaling.py --write concat:5000 "$work/concat5000.fir"
python3 bench/pipeline-scaling.py --write chain:2000 "$work/chain2000.fir"
cases=(test/lit/codegen/entry-names.fir test/lit/codegen/row-reduction-tables.fir
       test/lit/codegen/empty-constants.fir test/lit/codegen/llvm-f64-acc.fir
       test/lit/codegen/Inputs/gemm-epilogue-table.fir "$work/concat5000.fir" "$work/chain2000.fir")
pass=0 fail=0
for f in "${cases[@]}"; do
  [ -f "$f" ] || continue
  graphs=$(grep -o '^func @[A-Za-z0-9_.$]*' "$f" | sed 's/^func @//')
  for g in $graphs; do
    for backend in nvrtc llvm; do
      if timeout 300 $fusec run "$f" --graph="$g" --backend=$backend --check --seed=7 \
          >"$work/run.log" 2>&1; then
        pass=$((pass + 1))
      else
        fail=$((fail + 1)); echo "FAIL: $f @$g $backend"; tail -5 "$work/run.log"
      fi
    done
  done
done
# An artifact: compiled, then run from the file with its checksum verified.
$fusec compile examples/layernorm_gelu.fir --dim=rows=7 -o "$work/ln.fusec" &&
  $fusec run "$work/ln.fusec" --check >"$work/artifact.log" 2>&1 && pass=$((pass + 1)) ||
  { fail=$((fail + 1)); echo "FAIL: artifact"; tail -5 "$work/artifact.log"; }
echo "hardening: $pass passed, $fail failed"
