// What an op must do, whatever code runs it: the bytes it must move and the
// floating-point operations it must compute. Benchmarks divide a kernel's
// time by these to place it against the machine's floor (the copy bandwidth
// and the tensor-core rate measured beside it: bench/README.md).
#pragma once

#include <cstdint>
#include <string>

namespace fusec {

class Op;

/// Bytes `op` must move on static shapes: each distinct operand read once,
/// each result written once (0 for a value whose shape is not static).
uint64_t mustMoveBytes(const Op &op);

/// FLOPs of the contractions and convolutions `op` computes (a kernel: those
/// of its body), two per multiply-add: matmul and linear 2·M·N·K per batch;
/// attention 4·Sq·Sk·D per batch-head, halved when causal; conv2d
/// 2·N·K·P·Q·(C/groups)·R·S. Pointwise, reduction and movement work is not
/// counted: it is the bytes, not the arithmetic, that bound such kernels.
uint64_t contractionFlops(const Op &op);

/// The ops `op` runs, in order, joined by '+' ("matmul+add+gelu" for a gemm
/// kernel with its epilogue); constants are left out, and casts unless the
/// kernel does nothing else. A plain op: its name.
std::string fusedOpNames(const Op &op);

} // namespace fusec
