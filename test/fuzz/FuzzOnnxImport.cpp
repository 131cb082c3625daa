// libFuzzer target: arbitrary bytes as an ONNX model. The importer must
// refuse every damaged or hostile model with a diagnostic — never crash,
// hang, leak or allocate by a size it read — and whatever it imports must
// verify and round-trip. The model's folder holds a small data file
// (`w.bin`, bytes 0..255) and a link out of it (`out.bin`), so that
// external-data references reach the reading and the confinement checks.
#include "frontend/onnx/OnnxImport.h"
#include "test/fuzz/FuzzCommon.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <unistd.h>
#include <vector>

static fusec::OnnxImportOptions options;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  const char *tmp = std::getenv("TMPDIR");
  std::filesystem::path dir =
      std::string(tmp ? tmp : "/tmp") + "/fusec-fuzz-onnx-" + std::to_string(getpid());
  std::filesystem::create_directories(dir / "model");
  std::vector<uint8_t> data(256);
  std::iota(data.begin(), data.end(), 0);
  for (const char *name : {"model/w.bin", "outside.bin"})
    std::ofstream(dir / name, std::ios::binary)
        .write(reinterpret_cast<const char *>(data.data()), 256);
  std::error_code ignored;
  std::filesystem::create_symlink(dir / "outside.bin", dir / "model/out.bin", ignored);
  options.modelDir = (dir / "model").string();
  options.maxDataBytes = 1 << 24; // a fuzz input may not make the importer hold more
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fusec::Diagnostics diags;
  std::unique_ptr<fusec::Module> module =
      fusec::importOnnxBuffer({data, size}, "fuzz.onnx", options, diags);
  if (!module)
    fusec::fuzz::checkFailureReported(diags);
  else
    fusec::fuzz::checkRoundTrips(*module);
  return 0;
}
