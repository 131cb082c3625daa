// .npy reading and writing (runtime/reference/Npy.h): round trips of every dtype,
// NumPy-written headers of each format version, and one test per kind of
// bad file, each of which must be a diagnostic naming the file.
#include "runtime/reference/Npy.h"

#include <cstdio>
#include <gtest/gtest.h>
#include <sstream>
#include <string>

using namespace fusec;

namespace {

std::vector<uint8_t> bytesOf(const std::string &s) { return {s.begin(), s.end()}; }

/// A file with the given version and header text, then `data`.
std::vector<uint8_t> npyFile(int major, const std::string &header, const std::string &data) {
  std::string f = std::string("\x93NUMPY", 6) + char(major) + char(0);
  size_t n = header.size();
  f += char(n & 0xff);
  f += char((n >> 8) & 0xff);
  if (major > 1)
    f += std::string{char((n >> 16) & 0xff), char((n >> 24) & 0xff)};
  return bytesOf(f + header + data);
}

/// Parses `bytes` expecting failure; returns the printed diagnostics.
std::string parseError(const std::vector<uint8_t> &bytes, NpyReadOptions opts = {}) {
  Diagnostics diags;
  Tensor t;
  EXPECT_FALSE(parseNpy(bytes, "in.npy", t, diags, opts));
  return diags.str();
}

const std::string kF32Header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";

} // namespace

TEST(Npy, RoundTripsEveryDType) {
  for (DType dt : kAllDTypes) {
    Tensor t(dt, {2, 3});
    fillRandom(t, 5, -100, 100);
    std::vector<uint8_t> file = serializeNpy(t);
    EXPECT_EQ(file.size() % 64, t.bytes.size() % 64) << "data starts 64-byte aligned";
    Tensor back;
    Diagnostics diags;
    ASSERT_TRUE(parseNpy(file, "t.npy", back, diags, {/*u2AsBFloat16=*/true})) << dtypeName(dt);
    EXPECT_EQ(back.dtype, dt);
    EXPECT_EQ(back.shape, t.shape);
    EXPECT_EQ(back.bytes, t.bytes);
  }
}

TEST(Npy, WritesNumPyHeaders) {
  Tensor scalar(DType::F64, {}), vec(DType::I8, {4}), bf(DType::BF16, {1, 2});
  auto header = [](const Tensor &t) {
    std::vector<uint8_t> f = serializeNpy(t);
    size_t len = f[8] | (f[9] << 8);
    return std::string(f.begin() + 10, f.begin() + 10 + long(len));
  };
  EXPECT_EQ(header(scalar).rfind("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", 0), 0u);
  EXPECT_EQ(header(vec).rfind("{'descr': '|i1', 'fortran_order': False, 'shape': (4,), }", 0), 0u);
  EXPECT_EQ(header(bf).rfind("{'descr': '<u2', 'fortran_order': False, 'shape': (1, 2), }", 0), 0u);
  EXPECT_EQ(header(vec).back(), '\n');
}

TEST(Npy, ReadsVersionsTwoAndThreeAndLooseSpelling) {
  std::string data(24, '\0');
  for (int major : {1, 2, 3}) {
    Tensor t;
    Diagnostics diags;
    ASSERT_TRUE(parseNpy(npyFile(major, kF32Header + "   \n", data), "v.npy", t, diags)) << major;
    EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
  }
  Tensor t;
  Diagnostics diags;
  std::string loose = "{ \"shape\" : ( 4 , ) ,\"fortran_order\":False,'descr':'<i1'}\n";
  ASSERT_TRUE(parseNpy(npyFile(1, loose, "\x01\x02\x03\xff"), "l.npy", t, diags));
  EXPECT_EQ(t.dtype, DType::I8);
  EXPECT_EQ(t.getInt(3), -1);
}

TEST(Npy, BFloat16NeedsTheFlag) {
  Tensor bf(DType::BF16, {2});
  std::string err = parseError(serializeNpy(bf));
  EXPECT_NE(err.find("in.npy: error: unsupported .npy dtype '<u2'"), std::string::npos) << err;
}

// NumPy writes bools as 0 and 1; another byte is a corrupt file, not true.
TEST(Npy, BoolBytesOtherThanZeroOrOneAreErrors) {
  std::string h = "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }\n";
  Tensor t;
  Diagnostics diags;
  ASSERT_TRUE(parseNpy(npyFile(1, h, std::string("\x00\x01\x01", 3)), "b.npy", t, diags));
  EXPECT_EQ(t.bytes, (std::vector<uint8_t>{0, 1, 1}));
  std::string err = parseError(npyFile(1, h, std::string("\x00\x01\x07", 3)));
  EXPECT_NE(err.find("in.npy: error: bool element 2 is the byte 7, not 0 or 1"), std::string::npos)
      << err;
}

// A key given twice is an error: Python's dict would keep the last one, and
// fusec once did so silently.
TEST(Npy, DuplicateHeaderKeysAreErrors) {
  std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'shape': (2, 3), }";
  std::string err = parseError(npyFile(1, h, std::string(24, '\0')));
  EXPECT_NE(err.find("malformed .npy header: key 'shape' appears twice"), std::string::npos) << err;
}

TEST(Npy, BadFilesAreDiagnostics) {
  std::string data(24, '\0');
  struct Case {
    std::vector<uint8_t> file;
    const char *message;
  } cases[] = {
      {bytesOf("PK\x03\x04 not numpy"), "not a .npy file (bad magic)"},
      {{}, "not a .npy file (bad magic)"},
      {npyFile(4, kF32Header, data), "unsupported .npy format version 4.0"},
      {bytesOf(std::string("\x93NUMPY\x01\x00\xff", 9)), "truncated header"},
      {npyFile(1, kF32Header.substr(0, 20), data), "malformed .npy header"},
      {npyFile(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", data),
       "unsupported .npy dtype '>f4'"},
      {npyFile(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2, 3), }", data),
       "unsupported .npy dtype '<c8'"},
      {npyFile(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", data),
       "Fortran-order .npy data is not supported"},
      {npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", data),
       "malformed .npy header: 'shape' holds something other than non-negative integers"},
      {npyFile(1, "{'descr': '<f4', 'fortran_order': False}", data),
       "malformed .npy header: missing 'descr', 'fortran_order' or 'shape'"},
      {npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'x': 1}", data),
       "malformed .npy header: unknown key 'x'"},
      {npyFile(1, kF32Header, data.substr(0, 20)),
       "truncated data: shape (2, 3) of '<f4' needs 24 bytes, the file has 20"},
      {npyFile(1, kF32Header, data + "xx"),
       "data size mismatch: shape (2, 3) of '<f4' needs 24 bytes, the file has 26"},
      // A huge shape must be refused before anything is allocated.
      {npyFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000), }", data),
       "truncated data: shape (1000000, 1000000) of '<f8' needs 8000000000000 bytes"},
      {npyFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
               data),
       "truncated data: shape (4294967296, 4294967296) of '<f8' needs more bytes than exist"},
      {npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
               data),
       "malformed .npy header: a dimension of 'shape' is too large"},
  };
  for (const Case &c : cases) {
    std::string err = parseError(c.file);
    EXPECT_NE(err.find(std::string("in.npy: error: ") + c.message), std::string::npos)
        << "want: " << c.message << "\ngot: " << err;
  }
}

TEST(Npy, HeaderOver64KiBIsRefused) {
  std::vector<uint8_t> file = npyFile(2, std::string(70000, ' '), "");
  std::string err = parseError(file);
  EXPECT_NE(err.find("header of 70000 bytes is over the 64 KiB limit"), std::string::npos) << err;
}

TEST(Npy, FilesOnDisk) {
  std::string path = ::testing::TempDir() + "fusec-npy-test.npy";
  Tensor t(DType::F16, {3, 1});
  fillRandom(t, 9);
  Diagnostics diags;
  ASSERT_TRUE(writeNpy(path, t, diags));
  Tensor back;
  ASSERT_TRUE(readNpy(path, back, diags));
  EXPECT_EQ(back.bytes, t.bytes);
  std::remove(path.c_str());

  Diagnostics missing;
  EXPECT_FALSE(readNpy(path, back, missing));
  std::ostringstream os;
  missing.print(os);
  EXPECT_NE(os.str().find("cannot open '" + path + "': "), std::string::npos) << os.str();
  Diagnostics unwritable;
  EXPECT_FALSE(writeNpy("/nonexistent-dir/x.npy", t, unwritable));
  EXPECT_TRUE(unwritable.hasErrors());
}
