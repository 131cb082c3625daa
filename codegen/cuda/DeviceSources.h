// The device helper files of codegen/cuda/device/, embedded into the library at
// build time (codegen/CMakeLists.txt) so that generated kernels need no files
// at run time.
#pragma once

#include <string_view>

namespace fusec::cuda {

/// The text of every codegen/cuda/device/*.cuh file listed in
/// codegen/CMakeLists.txt, in that order, each file once.
std::string_view deviceHelperSource();

} // namespace fusec::cuda
