#!/bin/bash
# Compiles every GPU test case and example (each DIMS binding and TARGETS
# target of a case; examples at fp32, fp16 and bf16, symbolic and at two sizes) to kir, CUDA
# C++ and LLVM IR, one file each, under OUT. A refactoring of codegen that
# must not change any kernel leaves two dumps byte-identical:
#   scripts/dump-kernels.sh build/tools/fusec /tmp/before   (on the old tree)
#   scripts/dump-kernels.sh build/tools/fusec /tmp/after && diff -rq /tmp/before /tmp/after
set -u
fusec=$(realpath "$1") out=$2
mkdir -p "$out"
cd "$(dirname "$0")/.."
for f in test/gpu/cases/*.fir examples/*.fir; do
  dims=$(grep -h '^// DIMS:' "$f" | head -1 | sed 's|// DIMS:||')
  [ -z "$dims" ] && dims=_
  precs=fp32
  case $f in examples/*) precs="fp32 fp16 bf16" dims="$dims batch=1,seq=7 batch=2,seq=128" ;; esac
  # A case's `// TARGETS:` line adds targets to the device's (sm_90a here).
  targets="sm_90a $(grep -h '^// TARGETS:' "$f" | head -1 | sed 's|// TARGETS:||')"
  for d in $dims; do
    for p in $precs; do
      for t in $targets; do
        args=(--precision=$p --target=$t)
        [ "$d" != _ ] && for kv in ${d//,/ }; do args+=(--dim=$kv); done
        name=$(basename "$f" .fir).$d.$p
        [ "$t" != sm_90a ] && name=$name.$t
        for e in kir cuda llvm; do
          "$fusec" compile "$f" "${args[@]}" --emit=$e >"$out/$name.$e" 2>&1 || echo "rc=$?" >>"$out/$name.$e"
        done
      done
    done
  done
done
