// Number and string literals of the .fir text form, shared by the parser and
// the printer so that the two agree on every spelling (internal header).
//
// Floats print in the shortest decimal form that reads back to the same bits
// in their own dtype (f16 0.1 prints "0.1", not the exact binary value), and
// always with a '.' or an exponent. Decimal text converts to each float dtype
// with a single correctly rounded step (llvm::APFloat), never via double,
// so that print-then-parse is exact for every dtype.
#pragma once

#include "ir/Attribute.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fusec {

/// "1.0", "1e-05", "-0.5", "inf", "-inf", "nan": shortest round-trip form.
std::string formatDouble(double v);

enum class FloatParse { Ok, Overflow, Invalid };

/// Converts decimal text (optionally '-'-signed; or inf/-inf/nan) to the bit
/// pattern of float dtype `dt`, rounding to nearest even. Overflow: a finite
/// literal too large for the dtype.
FloatParse parseFloatBits(std::string_view text, DType dt, uint64_t &bits);

/// Converts decimal integer text (optionally '-'-signed) to int64; nullopt if
/// it is not an integer or does not fit.
std::optional<int64_t> parseInt64(std::string_view text);

/// The element's raw bits, zero-extended (little-endian bytes of its dtype).
uint64_t elementBits(const DenseData &d, size_t i);

/// The quiet NaN that the literal `nan` produces in float dtype `dt`.
uint64_t canonicalNaNBits(DType dt);

/// Whether float-dtype bits encode a NaN (false for other dtypes).
bool isNaNBits(DType dt, uint64_t bits);

/// Element i as a literal: "1.5", "-3", "true". Exact for every dtype.
std::string formatElement(const DenseData &d, size_t i);

/// A double-quoted string literal with \" \\ \n \t and \XX escapes.
std::string quoteString(std::string_view s);

} // namespace fusec
