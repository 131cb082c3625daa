// Reproducers as text (see Reproducer.h).
#include "test/fuzz/Reproducer.h"

#include "ir/TextFormat.h"

#include <charconv>
#include <iostream>
#include <sstream>

namespace fusec::fuzz {

namespace {

constexpr std::string_view kPrecisions[] = {"fp32", "fp16", "bf16"};

std::optional<int64_t> number(std::string_view s) {
  int64_t n = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size())
    return std::nullopt;
  return n;
}

/// Reads "--precision=P --equivalence-seed=S" into gen.
bool readOptions(std::istringstream &words, GeneratedModule &gen) {
  std::string word;
  while (words >> word) {
    std::string_view w = word;
    if (w.starts_with("--equivalence-seed=")) {
      std::optional<int64_t> seed = number(w.substr(19));
      if (!seed)
        return false;
      gen.seed = uint64_t(*seed);
      continue;
    }
    if (!w.starts_with("--precision="))
      return false;
    size_t i = 0;
    while (i < std::size(kPrecisions) && kPrecisions[i] != w.substr(12))
      ++i;
    if (i == std::size(kPrecisions))
      return false;
    gen.precision = PrecisionChoice(i);
  }
  return true;
}

/// Reads "NAME=SIZE ..." into `dims`.
bool readDims(std::istringstream &words, std::map<std::string, int64_t> &dims) {
  std::string word;
  while (words >> word) {
    size_t eq = word.find('=');
    std::optional<int64_t> size =
        eq == std::string::npos ? std::nullopt : number(word.substr(eq + 1));
    if (!size || *size < 0)
      return false;
    dims[word.substr(0, eq)] = *size;
  }
  return true;
}

/// The header: the options line, then a "// @NAME dims: ..." line per graph.
bool readHeader(std::string_view text, GeneratedModule &gen,
                std::map<std::string, std::map<std::string, int64_t>> &dims) {
  std::istringstream lines{std::string(text)};
  std::string line;
  std::getline(lines, line);
  std::istringstream options(line.substr(kReproducerPrefix.size()));
  if (!readOptions(options, gen))
    return false;
  while (std::getline(lines, line) && line.starts_with("//")) {
    size_t colon = line.find(" dims:");
    if (!line.starts_with("// @"))
      continue; // a comment on what the reproducer shows
    if (colon == std::string::npos)
      return false;
    std::istringstream words(line.substr(colon + 6));
    if (!readDims(words, dims[line.substr(4, colon - 4)]))
      return false;
  }
  return true;
}

} // namespace

std::string reproducerText(const GeneratedModule &gen) {
  std::string text = std::string(kReproducerPrefix) +
                     " --precision=" + std::string(kPrecisions[int(gen.precision)]) +
                     " --equivalence-seed=" + std::to_string(gen.seed) + "\n";
  for (size_t gi = 0; gi < gen.dims.size(); ++gi) {
    text += "// @" + gen.module->graphs[gi]->name() + " dims:";
    for (const auto &[name, size] : gen.dims[gi])
      text += " " + name + "=" + std::to_string(size);
    text += "\n";
  }
  std::ostringstream os;
  printModule(*gen.module, os);
  return text + os.str();
}

std::optional<GeneratedModule> parseReproducer(std::string_view text) {
  GeneratedModule gen;
  std::map<std::string, std::map<std::string, int64_t>> dims;
  Diagnostics diags;
  if (!readHeader(text, gen, dims) || !(gen.module = parseModule(text, "reproducer.fir", diags))) {
    std::cerr << "fuzz-compile: not a reproducer (a bad header or module)\n" << diags.str();
    return std::nullopt;
  }
  for (const auto &g : gen.module->graphs) {
    gen.dims.push_back(dims[g->name()]);
    gen.inputShapes.emplace_back();
    for (const Value *input : g->inputs()) {
      std::vector<int64_t> &shape = gen.inputShapes.back().emplace_back();
      for (const Dim &d : input->type().shape) {
        auto it = gen.dims.back().find(d.symbol);
        if (!d.isStatic() && it == gen.dims.back().end()) {
          std::cerr << "fuzz-compile: reproducer: no size for dim " << d.str() << "\n";
          return std::nullopt;
        }
        shape.push_back(d.isStatic() ? d.size : it->second);
      }
    }
  }
  return gen;
}

} // namespace fusec::fuzz
