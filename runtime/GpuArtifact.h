// Ahead-of-time compilation into `.fusec` artifacts (frontend/Artifact.h),
// and loading one to run without compiling. An artifact holds the lowered
// graph as text and every kernel's PTX and cubin under its cache key; a
// loaded artifact is a graph plus a kernel cache that holds exactly those
// kernels and refuses to compile anything else, so a stale artifact (its
// graph regenerates other sources under this fusec) fails loudly.
#pragma once

#include "frontend/Artifact.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"
#include "runtime/gpu/CudaDriver.h"
#include "runtime/gpu/KernelCache.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fusec {

struct StageTrace; // runtime/CompilePipeline.h

/// Compiles `g` (optimized by the default pipeline) for `inputShapes` and
/// `target` (sm_80, sm_90a, ...), running the compile's stages from
/// specialize to compile (`trace`: what to show of them). Needs NVRTC, not a
/// GPU. Nullopt after reporting an error.
std::optional<Artifact> compileArtifact(const Graph &g,
                                        const std::vector<std::vector<int64_t>> &inputShapes,
                                        const std::string &target, Diagnostics &diags,
                                        StageTrace *trace = nullptr);

struct LoadedArtifact {
  std::unique_ptr<Module> module; ///< one graph, already optimized and lowered
  std::unique_ptr<KernelCache> cache;
  std::vector<std::vector<int64_t>> inputShapes;
  std::string target;
};

/// Reads `path` and checks that it fits this fusec (same version) and, when
/// `device` is given, that its code runs there; reports why not ("compiled
/// for sm_80, which cannot run on this GPU (NVIDIA H100 ..., sm_90a): compile
/// it again with --target=sm_90a").
std::optional<LoadedArtifact> loadArtifact(const std::string &path,
                                           const std::optional<gpu::DeviceInfo> &device,
                                           Diagnostics &diags);

} // namespace fusec
