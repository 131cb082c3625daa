// .npy reading and writing.
//
// Layout of a file: the magic "\x93NUMPY", a major and minor version byte,
// the header length (2 bytes little-endian in version 1, 4 in versions 2 and
// 3), the header — a Python dict literal such as
// `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }` padded with
// spaces and a newline — and then the raw C-order element data. The header
// parser below accepts exactly that grammar (keys in any order, either
// quote, optional trailing commas) and nothing else.
#include "runtime/reference/Npy.h"

#include "ir/Assert.h"
#include "ir/FileIO.h"

#include <cctype>
#include <cstring>
#include <optional>
#include <set>

namespace fusec {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr size_t kMaxHeaderSize = 64 * 1024;

struct DescrName {
  DType dtype;
  const char *descr;
};
constexpr DescrName kDescrs[] = {{DType::F32, "<f4"},  {DType::F16, "<f2"}, {DType::F64, "<f8"},
                                 {DType::I32, "<i4"},  {DType::I64, "<i8"}, {DType::I8, "|i1"},
                                 {DType::Bool, "|b1"}, {DType::BF16, "<u2"}};

std::optional<DType> dtypeOfDescr(const std::string &descr, const NpyReadOptions &opts) {
  // One-byte types have no byte order; accept '<' as well as NumPy's '|'.
  std::string key = descr;
  if (key.size() == 3 && key[0] == '<' && key[2] == '1')
    key[0] = '|';
  for (const DescrName &d : kDescrs)
    if (key == d.descr && (d.dtype != DType::BF16 || opts.u2AsBFloat16))
      return d.dtype;
  return std::nullopt;
}

struct NpyHeader {
  std::string descr;
  std::optional<bool> fortranOrder;
  std::optional<std::vector<int64_t>> shape;
};

/// A recursive-descent parser for the header dict; `problem` says what went
/// wrong when a method returns false.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text(text) {}

  bool parse(NpyHeader &h) {
    if (!consume('{'))
      return fail("expected '{'");
    std::set<std::string> seen;
    while (!consume('}')) {
      std::string key;
      if (!parseString(key) || !consume(':'))
        return fail("malformed entry");
      if (!seen.insert(key).second)
        return fail("key '" + key + "' appears twice");
      if (!parseEntry(key, h))
        return problem.empty() ? fail("malformed entry") : false;
      if (!consume(',') && peek() != '}')
        return fail("expected ',' or '}'");
    }
    skipSpace();
    if (pos != text.size())
      return fail("unexpected text after the dict");
    if (h.descr.empty() || !h.fortranOrder || !h.shape)
      return fail("missing 'descr', 'fortran_order' or 'shape'");
    return true;
  }

  std::string problem;

private:
  bool fail(std::string why) {
    if (problem.empty())
      problem = std::move(why);
    return false;
  }
  void skipSpace() {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }
  char peek() {
    skipSpace();
    return pos < text.size() ? text[pos] : '\0';
  }
  bool consume(char c) {
    if (peek() != c)
      return false;
    ++pos;
    return true;
  }
  bool consumeWord(std::string_view w) {
    skipSpace();
    if (text.substr(pos, w.size()) != w)
      return false;
    pos += w.size();
    return true;
  }

  bool parseEntry(const std::string &key, NpyHeader &h) {
    if (key == "descr")
      return parseString(h.descr) || fail("'descr' is not a string");
    if (key == "fortran_order") {
      bool isTrue = consumeWord("True");
      if (!isTrue && !consumeWord("False"))
        return fail("'fortran_order' is not True or False");
      h.fortranOrder = isTrue;
      return true;
    }
    if (key == "shape")
      return parseShape(h);
    return fail("unknown key '" + key + "'");
  }

  bool parseString(std::string &out) {
    char quote = peek();
    if (quote != '\'' && quote != '"')
      return false;
    size_t end = text.find(quote, pos + 1);
    if (end == std::string_view::npos)
      return fail("unterminated string");
    out = std::string(text.substr(pos + 1, end - pos - 1));
    pos = end + 1;
    return true;
  }

  bool parseShape(NpyHeader &h) {
    if (!consume('('))
      return fail("'shape' is not a tuple");
    std::vector<int64_t> dims;
    while (!consume(')')) {
      skipSpace();
      int64_t d = 0;
      size_t start = pos;
      for (; pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])); ++pos)
        if (__builtin_mul_overflow(d, 10, &d) || __builtin_add_overflow(d, text[pos] - '0', &d))
          return fail("a dimension of 'shape' is too large");
      if (pos == start)
        return fail("'shape' holds something other than non-negative integers");
      dims.push_back(d);
      if (!consume(',') && peek() != ')')
        return fail("expected ',' or ')' in 'shape'");
    }
    h.shape = std::move(dims);
    return true;
  }

  std::string_view text;
  size_t pos = 0;
};

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

/// Reads the preamble; sets headerStart and headerSize.
bool readPreamble(std::span<const uint8_t> bytes, size_t &headerStart, size_t &headerSize,
                  std::string &problem) {
  if (bytes.size() < kMagicSize + 2 || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0) {
    problem = "not a .npy file (bad magic)";
    return false;
  }
  unsigned major = bytes[6], minor = bytes[7];
  if (minor != 0 || major < 1 || major > 3) {
    problem =
        "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor);
    return false;
  }
  size_t lenBytes = major == 1 ? 2 : 4;
  headerStart = kMagicSize + 2 + lenBytes;
  if (bytes.size() < headerStart) {
    problem = "truncated header";
    return false;
  }
  headerSize = 0;
  for (size_t i = 0; i < lenBytes; ++i)
    headerSize |= size_t(bytes[kMagicSize + 2 + i]) << (8 * i);
  if (headerSize > kMaxHeaderSize) {
    problem = "header of " + std::to_string(headerSize) + " bytes is over the 64 KiB limit";
    return false;
  }
  if (bytes.size() - headerStart < headerSize) {
    problem = "truncated header";
    return false;
  }
  return true;
}

/// Checks the parsed header against the `have` data bytes that follow it.
/// Returns the problem, or "" after setting `dtype`.
std::string checkHeader(const NpyHeader &h, uint64_t have, const NpyReadOptions &opts,
                        DType &dtype) {
  std::optional<DType> dt = dtypeOfDescr(h.descr, opts);
  if (!dt)
    return "unsupported .npy dtype '" + h.descr + "'" +
           (h.descr == "<u2" ? " (only a bf16 input reads '<u2', as raw bf16 bits)" : "");
  if (*h.fortranOrder)
    return "Fortran-order .npy data is not supported (save it in C order)";
  std::optional<uint64_t> need = tensorBytes(*dt, *h.shape);
  if (need && *need == have) {
    dtype = *dt;
    return "";
  }
  std::string what = !need || *need > have ? "truncated data" : "data size mismatch";
  std::string needText = need ? std::to_string(*need) + " bytes" : "more bytes than exist";
  return what + ": shape " + shapeText(*h.shape) + " of '" + h.descr + "' needs " + needText +
         ", the file has " + std::to_string(have);
}

bool fail(Diagnostics &diags, const std::string &file, const std::string &problem) {
  diags.error(Loc::text(file, 0, 0), problem);
  return false;
}

} // namespace

bool parseNpy(std::span<const uint8_t> bytes, const std::string &file, Tensor &out,
              Diagnostics &diags, const NpyReadOptions &opts) {
  size_t headerStart = 0, headerSize = 0;
  std::string problem;
  if (!readPreamble(bytes, headerStart, headerSize, problem))
    return fail(diags, file, problem);
  NpyHeader header;
  HeaderParser parser(
      std::string_view(reinterpret_cast<const char *>(bytes.data()) + headerStart, headerSize));
  if (!parser.parse(header))
    return fail(diags, file, "malformed .npy header: " + parser.problem);
  size_t dataStart = headerStart + headerSize;
  DType dtype = DType::F32;
  problem = checkHeader(header, bytes.size() - dataStart, opts, dtype);
  if (!problem.empty())
    return fail(diags, file, problem);
  out.dtype = dtype;
  out.shape = *header.shape;
  out.bytes.assign(bytes.begin() + long(dataStart), bytes.end());
  if (out.dtype != DType::Bool)
    return true;
  // NumPy writes a bool as the byte 0 or 1; any other byte is a corrupt file.
  for (size_t i = 0; i < out.bytes.size(); ++i)
    if (out.bytes[i] > 1)
      return fail(diags, file,
                  "bool element " + std::to_string(i) + " is the byte " +
                      std::to_string(out.bytes[i]) + ", not 0 or 1");
  return true;
}

bool readNpy(const std::string &path, Tensor &out, Diagnostics &diags, const NpyReadOptions &opts) {
  std::optional<std::vector<uint8_t>> bytes = readFile(path, diags, opts.maxFileBytes);
  return bytes && parseNpy(*bytes, path, out, diags, opts);
}

std::vector<uint8_t> serializeNpy(const Tensor &t) {
  const char *descr = nullptr;
  for (const DescrName &d : kDescrs)
    if (d.dtype == t.dtype)
      descr = d.descr;
  FUSEC_ASSERT(descr, "every dtype has a .npy descr");
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + shapeText(t.shape) + ", }";
  // NumPy pads so that the data starts at a multiple of 64 bytes.
  size_t preamble = kMagicSize + 2 + 2;
  size_t total = (preamble + header.size() + 1 + 63) / 64 * 64;
  header.append(total - preamble - header.size() - 1, ' ');
  header += '\n';
  FUSEC_ASSERT(header.size() <= 0xffff, "a version 1.0 header fits 16 bits");

  std::string start(kMagic, kMagicSize);
  start += {char(1), char(0), char(header.size() & 0xff), char(header.size() >> 8)};
  std::vector<uint8_t> out;
  out.reserve(total + t.bytes.size());
  out.insert(out.end(), start.begin(), start.end());
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), t.bytes.begin(), t.bytes.end());
  return out;
}

bool writeNpy(const std::string &path, const Tensor &t, Diagnostics &diags) {
  return writeFileAtomically(path, serializeNpy(t), diags);
}

} // namespace fusec
