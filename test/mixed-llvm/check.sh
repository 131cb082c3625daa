#!/usr/bin/env bash
# The static libfusec of `make dist` (LLVM 19 inside, its symbols hidden)
# in a process that loaded Debian's libLLVM-14 first, as an application that
# embeds PyTorch/Triton or Mesa would: fusec compiles pointwise kernels
# through its LLVM back end there, and the PTX is the same as without LLVM
# 14 (and assembles, where ptxas is installed). Usage: check.sh DIST_DIR
set -euo pipefail
dist=${1:?usage: check.sh DIST_DIR}
here=$(cd "$(dirname "$0")" && pwd)
llvm14=$(ls /usr/lib/*/libLLVM-14.so.1 2>/dev/null | head -1 || true)
if [ -z "$llvm14" ]; then
  echo "mixed-llvm: libLLVM-14.so.1 not found (make setup installs libllvm14)" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
model=$here/../lit/codegen/Inputs/every-pointwise-op.fir
compile() {
  "$dist/bin/fusec" compile "$model" --backend=llvm --emit=ptx --target=sm_90a -o "$1"
}
compile "$tmp/alone.ptx"
LD_DEBUG=files LD_PRELOAD=$llvm14 "$dist/bin/fusec" compile "$model" --backend=llvm \
  --emit=ptx --target=sm_90a -o "$tmp/mixed.ptx" 2>"$tmp/ld.log"
grep -q "calling init: $llvm14" "$tmp/ld.log" || {
  echo "mixed-llvm: $llvm14 was not loaded into the process" >&2
  exit 1
}
cmp -s "$tmp/alone.ptx" "$tmp/mixed.ptx" || {
  echo "mixed-llvm: the PTX differs with LLVM 14 loaded" >&2
  diff "$tmp/alone.ptx" "$tmp/mixed.ptx" | head -20 >&2
  exit 1
}
grep -c "^.visible .entry" "$tmp/mixed.ptx" >/dev/null
ptxas=${CUDA_HOME:-/usr/local/cuda}/bin/ptxas
if [ -x "$ptxas" ]; then
  "$ptxas" -arch=sm_90a "$tmp/mixed.ptx" -o "$tmp/mixed.cubin"
fi
echo "mixed-llvm: $(grep -c '^.visible .entry' "$tmp/mixed.ptx") kernels compiled with $llvm14 loaded: same PTX as alone"
