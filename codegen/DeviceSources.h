// The device helper files of codegen/device/, embedded into the library at
// build time (codegen/CMakeLists.txt) so that generated kernels need no files
// at run time.
#pragma once

#include <string_view>

namespace fusec {

/// The text of codegen/device/Pointwise.cuh.
std::string_view pointwiseDeviceSource();

} // namespace fusec
