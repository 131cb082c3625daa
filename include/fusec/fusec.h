// fusec's public header for embedding applications: plain C++, no LLVM or
// CUDA types. An application loads a model (a .fir text, .fb model file or
// ONNX .onnx file, or .fir text built in memory), compiles one of its graphs, and runs it on
// its own device buffers and CUDA stream:
//
//   std::string error;
//   auto model = fusec::Model::load("bert.fb", &error);
//   fusec::CompileOptions options;
//   options.precision = fusec::Precision::FP16;
//   auto graph = fusec::CompiledGraph::compile(*model, "", options, &error);
//   graph->run({{x, {8, 512, 768}}}, {{y, {8, 512, 768}}}, stream, &error);
//
// Compilation is lazy and per input shape: the first run with a new shape
// generates, compiles (through the kernel cache, memory and disk) and loads
// that shape's kernels; later runs with the same buffers replay a CUDA graph.
// Every call is thread-safe. Errors come back as false/null with a message;
// nothing throws and nothing aborts on bad input.
#pragma once

#include "backend.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fusec {

/// The library version, "MAJOR.MINOR.PATCH".
const char *version();

enum class Precision { FP32, FP16, BF16 };

/// How a graph is compiled.
struct CompileOptions {
  Precision precision = Precision::FP32; ///< autocast of the default pipeline
  std::string target;                    ///< "" : the device's (sm_90a on Hopper)
  bool cudaGraphs = true;                ///< capture and replay runs on a non-null stream
  Backend backend = Backend::Nvrtc;      ///< the code generator (backend.h)
  /// Time the candidate configs of each kernel the tuning cache does not know on the GPU when a
  /// shape is first compiled, and keep the fastest there (beside the kernel cache). Off, a
  /// compile still takes the configs the cache holds.
  bool tune = false;
};

/// A device buffer and the shape of the tensor in it (row-major, dense).
/// Addresses must be 16-byte aligned (cudaMalloc's are).
struct DeviceTensor {
  void *data = nullptr;
  std::vector<int64_t> shape;
};

/// What was compiled for one kernel of one input shape.
struct KernelInfo {
  std::string name;
  std::string templateName; ///< "pointwise", "row_reduction", "gemm", or a generic op's name
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned sharedBytes = 0;
  double compileMs = 0;
  std::string cacheSource; ///< "memory", "disk" or "compiled"
  std::string schedule;    ///< its tiles and schedule as its template chose them (a gemm's)
  std::string tuning;      ///< where its config came from: the tuning cache, --tune, or "" untuned
};

/// A loaded and verified model: one or more graphs.
class Model {
public:
  /// Loads a .fir, model (.fb) or ONNX (.onnx, docs/onnx.md) file; null with a
  /// located message in `error`.
  static std::unique_ptr<Model> load(const std::string &path, std::string *error);
  /// Parses .fir text (`name` is used in messages).
  static std::unique_ptr<Model> parse(const std::string &text, const std::string &name,
                                      std::string *error);
  ~Model();
  std::vector<std::string> graphNames() const;

  struct Impl;
  const Impl &impl() const { return *pimpl; }

private:
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> pimpl;
};

/// One graph of a model, optimized, and compiled for the GPU per input shape.
class CompiledGraph {
public:
  /// Optimizes graph `graphName` of `model` ("" : the first) with the
  /// default pipeline. Needs no GPU; kernels are generated at the first run
  /// of each input shape. Null with a message in `error`.
  static std::unique_ptr<CompiledGraph> compile(const Model &model, const std::string &graphName,
                                                const CompileOptions &options, std::string *error);
  ~CompiledGraph();

  /// The output shapes for these input shapes (false with a message when
  /// the shapes do not fit the graph).
  bool outputShapes(const std::vector<std::vector<int64_t>> &inputShapes,
                    std::vector<std::vector<int64_t>> &outputShapes, std::string *error) const;

  /// Runs on `stream` (a CUstream or cudaStream_t; null: the default
  /// stream, no graph replay), asynchronously: reads `inputs`, writes
  /// `outputs` (shapes as outputShapes gives). The first run of a shape
  /// compiles it. False with a message on error (no GPU, a shape mismatch,
  /// a CUDA error naming the kernel).
  bool run(const std::vector<DeviceTensor> &inputs, const std::vector<DeviceTensor> &outputs,
           void *stream, std::string *error);

  /// The kernels compiled for these input shapes (compiling them if needed).
  std::vector<KernelInfo> kernels(const std::vector<std::vector<int64_t>> &inputShapes,
                                  std::string *error);

  struct Impl;

private:
  explicit CompiledGraph(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> pimpl;
};

/// Device memory for applications without CUDA code of their own
/// (examples, tests): allocated on construction, freed on destruction.
class DeviceBuffer {
public:
  /// Null with a message ("no CUDA driver found ...", out of memory) on failure.
  static std::unique_ptr<DeviceBuffer> allocate(size_t bytes, std::string *error);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  void *data() const { return address; }
  size_t size() const { return bytes; }
  /// Synchronous copies of size() bytes from and to host memory.
  bool upload(const void *host, std::string *error);
  bool download(void *host, std::string *error) const;

private:
  DeviceBuffer(void *address, size_t bytes) : address(address), bytes(bytes) {}
  void *address;
  size_t bytes;
};

/// Waits for the work queued on `stream` (null: the default stream).
bool synchronize(void *stream, std::string *error);

} // namespace fusec
