// The tune stage (see Tuning.h).
//
// Note [Timing candidates]
// A kernel's candidates are timed together: one graph runs a copy of the kernel per candidate
// config, all reading the same inputs (seeded random values in [-1, 1)), each writing its own
// results, so the copies compile in parallel through the kernel cache like any program's steps
// and GpuProgram::timeSteps times each one alone: the median of kReps launches after a warm-up,
// each after an L2 flush, as `fusec bench` times kernels. Candidates whose results would take more
// than kMaxOutputBytes together are split over several such graphs. A candidate replaces the
// template's own choice only when it is at least kMargin faster: closer than that is the timer's
// noise, and the heuristic choice is the one that does not depend on a measurement.
#include "runtime/Tuning.h"

#include "codegen/Codegen.h"
#include "ir/Kernel.h"
#include "runtime/CompilePipeline.h"
#include "runtime/gpu/GpuHost.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>

namespace fusec {

namespace {

constexpr unsigned kReps = 25;
constexpr double kMargin = 0.02;
constexpr int64_t kMaxOutputBytes = int64_t(2) << 30;

/// A graph of one copy of `kernel` per config of `configs`, in order, reading the same inputs.
std::unique_ptr<Graph> candidateGraph(const Op &kernel, const std::vector<std::string> &configs) {
  auto g = std::make_unique<Graph>("tune_" + kernel.result(0)->name());
  std::vector<Value *> ins;
  for (unsigned i = 0; i < kernel.numOperands(); ++i)
    ins.push_back(g->addInput("in" + std::to_string(i), kernel.operand(i)->type()));
  std::vector<TensorType> types;
  for (unsigned r = 0; r < kernel.numResults(); ++r)
    types.push_back(kernel.result(r)->type());
  std::vector<Value *> outs;
  for (const std::string &config : configs) {
    AttrList attrs = {{"template", kernel.getString("template")}, {"config", config}};
    Op *copy = g->createOp(OpKind::Kernel, ins, types, std::move(attrs), kernel.loc());
    copy->setBody(kernel.body()->clone());
    for (unsigned r = 0; r < copy->numResults(); ++r)
      outs.push_back(copy->result(r));
  }
  g->setOutputs(outs);
  return g;
}

/// Device microseconds of each of `configs` for `kernel` (infinity for one that did not run as a
/// kernel of its own); nullopt after reporting an error.
std::optional<std::vector<double>> timeCandidates(const Op &kernel,
                                                  const std::vector<std::string> &configs,
                                                  const TuningRequest &request,
                                                  Diagnostics &diags) {
  std::vector<Tensor> inputs;
  std::vector<std::vector<int64_t>> shapes;
  for (unsigned i = 0; i < kernel.numOperands(); ++i) {
    const TensorType &t = kernel.operand(i)->type();
    inputs.emplace_back(t.dtype, staticSizes(t.shape));
    fillRandom(inputs.back(), 7919 + i);
    shapes.push_back(inputs.back().shape);
  }
  int64_t outputBytes = 1;
  for (unsigned r = 0; r < kernel.numResults(); ++r) {
    const TensorType &t = kernel.result(r)->type();
    outputBytes += staticNumElements(t.shape).value_or(0) * int64_t(dtypeSize(t.dtype));
  }
  size_t perGraph = size_t(std::max<int64_t>(1, kMaxOutputBytes / outputBytes));
  std::unique_ptr<DeviceTimer> timer = DeviceTimer::create(diags);
  std::optional<gpu::Stream> stream = timer ? gpu::createStream(diags) : std::nullopt;
  if (!stream)
    return std::nullopt;
  std::vector<double> us;
  bool ok = true;
  for (size_t first = 0; ok && first < configs.size(); first += perGraph) {
    std::vector<std::string> some(configs.begin() + first,
                                  configs.begin() + std::min(configs.size(), first + perGraph));
    std::unique_ptr<Graph> g = candidateGraph(kernel, some);
    GpuBuildOptions opts{request.target, request.kernels, false, request.backend};
    opts.tuning = TuningMode::Off;
    std::unique_ptr<GpuProgram> p = buildGpuProgram(*g, shapes, opts, diags);
    DeviceBuffers in, out;
    std::optional<std::vector<float>> ms;
    ok = p && prepareBuffers(*p, inputs, in, out, diags) &&
         (ms = p->timeSteps(in.pointers(), out.pointers(), *stream, *timer, kReps, diags));
    if (!ok)
      break;
    // One step a candidate, in order, unless a copy ran op by op (then none is trusted).
    bool oneEach = ms->size() == some.size();
    for (size_t c = 0; c < some.size(); ++c)
      us.push_back(oneEach ? (*ms)[c] * 1000.0 : std::numeric_limits<double>::infinity());
  }
  gpu::destroyStream(*stream);
  return ok ? std::optional(us) : std::nullopt;
}

std::string describe(const TuningEntry &e) {
  char times[96];
  std::snprintf(times, sizeof times, " (%.1f us; the template's choice %.1f us; %u candidates)",
                e.us, e.defaultUs, e.candidates);
  return (e.config.empty() ? std::string("the template's choice") : "'" + e.config + "'") + times;
}

} // namespace

bool tuneKernels(Graph &g, const TuningRequest &request, TuningNotes &notes, Diagnostics &diags) {
  TuningCache &cache = request.cache ? *request.cache : TuningCache::global();
  for (const auto &owned : g.ops()) {
    Op &op = *owned;
    if (op.kind() != OpKind::Kernel || op.attrIfPresent("config"))
      continue;
    std::vector<std::string> configs = tuningCandidates(op, request.target);
    if (configs.empty())
      continue;
    std::string key =
        TuningCache::keyOf({request.device, request.target, request.backend, kernelSignature(op)});
    std::string whyMissed;
    std::optional<TuningEntry> entry = cache.lookup(key, whyMissed);
    if (entry && std::find(configs.begin(), configs.end(), entry->config) == configs.end()) {
      whyMissed = "stale entry: '" + entry->config + "' is not one of the kernel's candidates";
      entry.reset(); // an edited file: the key names fusec's version, whose candidates it knows
    }
    if (entry) {
      notes[&op] = "hit [" + key + "]: " + describe(*entry);
    } else if (request.mode != TuningMode::Tune) {
      notes[&op] = "miss [" + key + "]: " + whyMissed + "; the template's choice";
      continue;
    } else {
      auto start = std::chrono::steady_clock::now();
      std::optional<std::vector<double>> us = timeCandidates(op, configs, request, diags);
      if (!us)
        return false;
      size_t best = 0; // configs[0] is the template's choice
      for (size_t c = 1; c < configs.size(); ++c)
        if ((*us)[c] < (*us)[best] && (*us)[c] < (*us)[0] * (1 - kMargin))
          best = c;
      entry = TuningEntry{configs[best], (*us)[best], (*us)[0], unsigned(configs.size())};
      cache.store(key, *entry, diags);
      double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      char took[48];
      std::snprintf(took, sizeof took, " in %.0f ms", ms);
      notes[&op] = "tuned [" + key + "]" + took + ": " + describe(*entry);
    }
    if (!entry->config.empty())
      op.setAttr("config", entry->config);
  }
  return true;
}

} // namespace fusec
