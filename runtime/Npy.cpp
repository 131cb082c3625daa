// .npy reading and writing.
//
// Layout of a file: the magic "\x93NUMPY", a major and minor version byte,
// the header length (2 bytes little-endian in version 1, 4 in versions 2 and
// 3), the header — a Python dict literal such as
// `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }` padded with
// spaces and a newline — and then the raw C-order element data. The header
// parser below accepts exactly that grammar (keys in any order, either
// quote, optional trailing commas) and nothing else.
#include "runtime/Npy.h"

#include "ir/Assert.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <cstring>
#include <optional>

namespace fusec {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr size_t kMaxHeaderSize = 64 * 1024;

struct DescrName {
  DType dtype;
  const char *descr;
};
constexpr DescrName kDescrs[] = {{DType::F32, "<f4"}, {DType::F16, "<f2"}, {DType::F64, "<f8"},
                                 {DType::I32, "<i4"}, {DType::I64, "<i8"}, {DType::I8, "|i1"},
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
    while (!consume('}')) {
      std::string key;
      if (!parseString(key) || !consume(':') || !parseEntry(key, h))
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

/// Element count times item size, or nullopt when it overflows.
std::optional<uint64_t> dataSize(const std::vector<int64_t> &shape, uint64_t itemSize) {
  uint64_t n = itemSize;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, uint64_t(d), &n))
      return std::nullopt;
  return n;
}

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
    problem = "unsupported .npy format version " + std::to_string(major) + "." +
              std::to_string(minor);
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

} // namespace

bool parseNpy(std::span<const uint8_t> bytes, const std::string &file, Tensor &out,
              Diagnostics &diags, const NpyReadOptions &opts) {
  Loc loc{file};
  size_t headerStart = 0, headerSize = 0;
  std::string problem;
  if (!readPreamble(bytes, headerStart, headerSize, problem)) {
    diags.error(loc, problem);
    return false;
  }
  std::string_view text(reinterpret_cast<const char *>(bytes.data()) + headerStart, headerSize);
  NpyHeader header;
  HeaderParser parser(text);
  if (!parser.parse(header)) {
    diags.error(loc, "malformed .npy header: " + parser.problem);
    return false;
  }
  std::optional<DType> dtype = dtypeOfDescr(header.descr, opts);
  if (!dtype) {
    std::string hint = header.descr == "<u2" ? " (bf16 data is read from '<u2' only for bf16)" : "";
    diags.error(loc, "unsupported .npy dtype '" + header.descr + "'" + hint);
    return false;
  }
  if (*header.fortranOrder) {
    diags.error(loc, "Fortran-order .npy data is not supported (save it in C order)");
    return false;
  }
  const std::vector<int64_t> &shape = *header.shape;
  std::optional<uint64_t> need = dataSize(shape, dtypeSize(*dtype));
  uint64_t have = bytes.size() - headerStart - headerSize;
  if (!need || *need != have) {
    std::string needText = need ? std::to_string(*need) + " bytes" : "more bytes than exist";
    diags.error(loc, std::string(need && *need > have ? "truncated data" : "data size mismatch") +
                         ": shape " + shapeText(shape) + " of '" + header.descr + "' needs " +
                         needText + ", the file has " + std::to_string(have));
    return false;
  }
  const uint8_t *data = bytes.data() + headerStart + headerSize;
  out.dtype = *dtype;
  out.shape = shape;
  out.bytes.assign(data, data + *need);
  if (out.dtype == DType::Bool) // NumPy writes 0/1; anything else is true
    for (uint8_t &b : out.bytes)
      b = b != 0;
  return true;
}

bool readNpy(const std::string &path, Tensor &out, Diagnostics &diags,
             const NpyReadOptions &opts) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    diags.error(Loc{path}, "cannot read .npy file: " + buffer.getError().message());
    return false;
  }
  llvm::StringRef data = (*buffer)->getBuffer();
  std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t *>(data.data()), data.size());
  return parseNpy(bytes, path, out, diags, opts);
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

  std::vector<uint8_t> out(kMagic, kMagic + kMagicSize);
  out.insert(out.end(), {1, 0, uint8_t(header.size() & 0xff), uint8_t(header.size() >> 8)});
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), t.bytes.begin(), t.bytes.end());
  return out;
}

bool writeNpy(const std::string &path, const Tensor &t, Diagnostics &diags) {
  std::vector<uint8_t> bytes = serializeNpy(t);
  llvm::Error err = llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
    os.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
    return llvm::Error::success();
  });
  if (err) {
    diags.error(Loc{path}, "cannot write .npy file: " + llvm::toString(std::move(err)));
    return false;
  }
  return true;
}

} // namespace fusec
