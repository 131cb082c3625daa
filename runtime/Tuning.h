// The tune stage of the compile pipeline (CompilePipeline.h): each kernel whose template has a
// choice to make (today gemm's tiles, schedule and split of K) takes the config the tuning cache
// holds for it (runtime/gpu/TuningCache.h); with TuningMode::Tune, a kernel the cache does not
// know is first timed on the GPU in every candidate config its template offers
// (codegen/Codegen.h tuningCandidates), and the fastest is kept. A kernel whose `config` the model
// sets is left as it is. Note [Timing candidates] in Tuning.cpp says how candidates are timed.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Graph.h"
#include "runtime/gpu/GpuProgram.h"

#include <map>
#include <string>

namespace fusec {

/// Where each tuned kernel's config came from, by kernel op, for --explain-cache:
/// "hit (disk) [KEY]: bm=128 bn=128 splitk=2", "tuned [KEY]: ...", "miss [KEY]: no entry".
using TuningNotes = std::map<const Op *, std::string>;

/// What a tune stage is asked to do on a GPU of name `device`.
struct TuningRequest {
  TuningMode mode = TuningMode::Cached;
  TuningCache *cache = nullptr;   ///< null: TuningCache::global()
  KernelCache *kernels = nullptr; ///< where candidates compile; null: KernelCache::global()
  std::string device;             ///< DeviceInfo::name
  std::string target;
  Backend backend = Backend::Nvrtc;
};

/// The tune stage over the kernel ops of `g` (shape-specialized): sets the `config` of each one
/// the cache (or, tuning, the GPU) has an answer for, and says where it came from in `notes`.
/// False after reporting an error (a GPU error while timing).
bool tuneKernels(Graph &g, const TuningRequest &request, TuningNotes &notes, Diagnostics &diags);

} // namespace fusec
