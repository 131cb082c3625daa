// kir kernels built by hand, for the tests of primitives that no template uses yet: the unit tests
// (test/unit/KirTest.cpp) check their printed and rendered forms, the lit tests assemble them
// (fusec-kir-sample, test/lit/codegen/kir-hopper-ptxas.test).
#pragma once

#include "codegen/kir/Kir.h"

#include <optional>
#include <string>

namespace fusec::test {

/// A warp-specialized skeleton of sm_90a (384 threads, one block an SM): thread 0 inits two
/// mbarriers; the producer warpgroup (threads 0-127) gives its registers back (setmaxnreg.dec)
/// and its thread 0 loads a 2-d and a 3-d box by TMA, both completing on `full`, then arrives at
/// named barrier 2; the two consumer warpgroups take more registers (setmaxnreg.inc), wait for
/// `full`'s phase 0, copy the tile out, arrive at `empty`, sync on named barriers 1 (the 256
/// consumers) and 2 (with the producer), and wait for `empty`'s phase 0.
kir::Kernel hopperSample();

/// Two blocks of a cluster share one TMA box (a dependent launch: it first waits for the kernels
/// before it): thread 0 of each inits a `full` and an `empty` mbarrier, a cluster barrier shows
/// them to both; rank 0's thread 0 loads the box into both blocks' shared memory (multicast,
/// completing on both `full` barriers), each block's thread 0 waits for its `full`, copies a word
/// out and arrives on rank 0's `empty` (a remote arrival), which rank 0 waits for; a cluster
/// barrier ends the kernel.
kir::Kernel clusterSample();

/// A tile stored by TMA from shared memory: each thread unpacks both halves of a packed f16 pair
/// (Unpack), writes them into the tile, waits for its warp's lanes (the warp's barrier), makes its
/// writes visible to the TMA (fence.proxy.async);
/// after the block's barrier thread 0 stores the tile to the box at (x, 0) of the tensor map,
/// commits the bulk group and waits until it no longer reads the tile.
kir::Kernel storeSample();

/// The sample named `name` ("hopper", "cluster", "store"), if there is one.
std::optional<kir::Kernel> kirSample(const std::string &name);

} // namespace fusec::test
