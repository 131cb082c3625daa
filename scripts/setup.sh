#!/usr/bin/env bash
# Installs the Debian packages fusec builds and tests with. Idempotent: does
# nothing when every package is already installed.
set -euo pipefail

packages=(
  cmake ninja-build g++ python3
  llvm-19-dev llvm-19-tools          # LLVM (Support, NVPTX back end); FileCheck, lit, not
  libllvm14                          # another LLVM, for the mixed-LLVM process test
  clang-19 libclang-rt-19-dev        # libFuzzer targets
  libflatbuffers-dev flatbuffers-compiler
  libonnx-dev libprotobuf-dev        # ONNX import (the ONNX protobuf classes, checker)
  python3-onnx                       # ONNX's backend node tests (generated), test fixtures
  libgtest-dev libzstd-dev zlib1g-dev libedit-dev libxml2-dev libcurl4-openssl-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "setup: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
