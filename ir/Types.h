// Tensor types of the IR: element dtypes, shapes with static or symbolic
// dimensions, and the layout tag that conv/pool/batch_norm read.
//
// A dimension is either a static size (>= 0) or a symbol. Symbols are named
// (`batch`, `seq`) or anonymous (`?`). Two named dims with the same name are
// the same size everywhere in a graph; anonymous dims promise nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fusec {

enum class DType : uint8_t { F32, F16, BF16, F64, I32, I64, I8, Bool };
inline constexpr DType kAllDTypes[] = {DType::F32, DType::F16, DType::BF16, DType::F64,
                                       DType::I32, DType::I64, DType::I8,   DType::Bool};

/// The text spelling: f32, f16, bf16, f64, i32, i64, i8, bool.
std::string_view dtypeName(DType t);
/// Parses a spelling produced by dtypeName; nullopt for anything else.
std::optional<DType> parseDType(std::string_view s);
/// Bytes per element in memory and in model files.
unsigned dtypeSize(DType t);
bool isFloat(DType t);
bool isInteger(DType t); // i8, i32, i64 (bool is neither float nor integer)
/// f16 and bf16: 16-bit floats, whose math runs in f32.
inline bool isNarrowFloat(DType t) { return t == DType::F16 || t == DType::BF16; }
/// True when every value of `from` is exactly a value of `to` (a widening).
bool castIsExact(DType from, DType to);
/// True when cast(cast(x: from, to = mid), to = to) equals cast(x, to = to)
/// for every x: the first cast is exact, and it does not turn a wrapping
/// integer narrowing into a saturating float-to-integer one.
bool castPairFolds(DType from, DType mid, DType to);

struct Dim {
  int64_t size = 0;   // meaningful when symbol is empty
  std::string symbol; // "" static, "?" anonymous, otherwise a name

  static Dim fixed(int64_t n) { return Dim{n, {}}; }
  static Dim named(std::string name) { return Dim{0, std::move(name)}; }
  static Dim anonymous() { return Dim{0, "?"}; }

  bool isStatic() const { return symbol.empty(); }
  bool isAnonymous() const { return symbol == "?"; }
  bool isStaticValue(int64_t n) const { return isStatic() && size == n; }
  bool operator==(const Dim &o) const = default;
  std::string str() const;
};

using Shape = std::vector<Dim>;

/// Builds a static shape from sizes.
Shape staticShape(const std::vector<int64_t> &sizes);
/// "[2,batch,?]".
std::string shapeStr(const Shape &s);
bool isStatic(const Shape &s);
/// Product of static sizes; nullopt if any dim is symbolic or it overflows int64.
std::optional<int64_t> staticNumElements(const Shape &s);
/// The sizes of a static shape; asserts that every dim is static.
std::vector<int64_t> staticSizes(const Shape &s);

enum class Layout : uint8_t { None, NCHW, NHWC };
std::string_view layoutName(Layout l); // "", "nchw", "nhwc"
std::optional<Layout> parseLayout(std::string_view s);

struct TensorType {
  DType dtype = DType::F32;
  Shape shape;
  Layout layout = Layout::None;

  size_t rank() const { return shape.size(); }
  bool operator==(const TensorType &o) const = default;
  /// Text form: f16[batch,768], f32[1,3,8,8]{nchw}, f32[] for a scalar.
  std::string str() const;
};

/// Resolves a possibly negative axis against a rank; nullopt if out of range.
std::optional<unsigned> normalizeAxis(int64_t axis, size_t rank);

/// Python's slice bound in a dim of size n: counted from the end when negative, then clamped to
/// [0, n].
int64_t sliceBound(int64_t bound, int64_t n);

} // namespace fusec
