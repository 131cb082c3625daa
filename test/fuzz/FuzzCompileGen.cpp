// fuzz-compile-gen: the compile-path fuzzer's generator on its own, to read
// what an input means or to make random modules for other tools.
//
//   fuzz-compile-gen [--big] FILE...     the module each fuzzer input makes
//                                        (--big: as fuzz-compile --big reads it)
//   fuzz-compile-gen --random=N [--seed=S] [--stats] DIR
//                                        N modules from seeded random bytes
//                                        as DIR/<i>.fir; --stats prints how
//                                        many ops of each kind they hold
//   fuzz-compile-gen --seeds=N DIR       N seeded random inputs of 64 to
//                                        1024 bytes as DIR/seed-<i>: a
//                                        starting corpus of full-sized modules
//
// Each module is written as a reproducer (Reproducer.h): fuzz-compile
// replays it, fusec-opt and fusec read it.
#include "ir/TextFormat.h"
#include "test/fuzz/Reproducer.h"

#include <fstream>
#include <fuzzer/FuzzedDataProvider.h>
#include <iostream>
#include <iterator>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <string_view>

using namespace fusec;

namespace {

void count(const Graph &g, std::map<std::string_view, size_t> &counts) {
  for (const auto &op : g.ops()) {
    ++counts[op->name()];
    if (op->body())
      count(*op->body(), counts);
  }
}

std::vector<uint8_t> randomBytes(std::mt19937_64 &rng) {
  std::vector<uint8_t> bytes(64 + rng() % 960);
  for (uint8_t &b : bytes)
    b = uint8_t(rng());
  return bytes;
}

int writeSeeds(size_t n, uint64_t seed, const std::string &dir) {
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < n; ++i) {
    std::vector<uint8_t> bytes = randomBytes(rng);
    std::ofstream(dir + "/seed-" + std::to_string(i), std::ios::binary)
        .write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
  }
  return 0;
}

int writeRandom(size_t n, uint64_t seed, bool stats, const std::string &dir) {
  std::mt19937_64 rng(seed);
  std::map<std::string_view, size_t> counts;
  for (size_t i = 0; i < n; ++i) {
    std::vector<uint8_t> bytes = randomBytes(rng);
    FuzzedDataProvider data(bytes.data(), bytes.size());
    fuzz::GeneratedModule gen = fuzz::generateModule(data);
    for (const auto &g : gen.module->graphs)
      count(*g, counts);
    std::ofstream(dir + "/" + std::to_string(i) + ".fir") << fuzz::reproducerText(gen);
  }
  if (stats)
    for (const OpInfo &info : allOps())
      std::cout << info.spelling << " " << counts[info.spelling] << "\n";
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> files;
  size_t randomCount = 0, seedCount = 0;
  uint64_t seed = 1;
  bool stats = false;
  fuzz::GeneratorLimits limits;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.starts_with("--random="))
      randomCount = std::stoul(std::string(arg.substr(9)));
    else if (arg.starts_with("--seeds="))
      seedCount = std::stoul(std::string(arg.substr(8)));
    else if (arg.starts_with("--seed="))
      seed = std::stoull(std::string(arg.substr(7)));
    else if (arg == "--stats")
      stats = true;
    else if (arg == "--big")
      limits.big = true;
    else
      files.emplace_back(arg);
  }
  if (seedCount)
    return files.size() == 1 ? writeSeeds(seedCount, seed, files[0]) : 2;
  if (randomCount)
    return files.size() == 1 ? writeRandom(randomCount, seed, stats, files[0]) : 2;
  for (const std::string &file : files) {
    std::ifstream in(file, std::ios::binary);
    std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), {}};
    FuzzedDataProvider data(bytes.data(), bytes.size());
    std::cout << fuzz::reproducerText(fuzz::generateModule(data, limits));
  }
  return 0;
}
