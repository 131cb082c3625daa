// The device helper files of codegen/device/, embedded into the library at
// build time (codegen/CMakeLists.txt) so that generated kernels need no files
// at run time.
#pragma once

#include <string_view>

namespace fusec {

/// The text of every codegen/device/*.cuh file listed in
/// codegen/CMakeLists.txt, in that order, each file once.
std::string_view deviceHelperSource();

} // namespace fusec
