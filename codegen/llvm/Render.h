// The LLVM IR renderer: builds a kir kernel as an LLVM 19 module for the
// NVPTX back end (codegen/llvm/Nvptx.h compiles it to PTX). It knows kir, not
// kernel families.
#pragma once

#include "codegen/kir/Kir.h"

#include <string>

namespace fusec::llvmir {

/// A module (as text) holding `k` as a ptx_kernel function with its
/// parameters in order (pointers noalias, read-only ones readonly) and its
/// constant tables as internal globals.
std::string render(const kir::Kernel &k);

} // namespace fusec::llvmir
