// What a kernel template's kir builder returns: the kernel, the meaning of its parameters and, for
// static shapes, its launch. Codegen.cpp verifies it and has the chosen back end render it into a
// GeneratedKernel.
#pragma once

#include "codegen/GeneratedKernel.h"
#include "codegen/kir/Kir.h"

#include <optional>
#include <vector>

namespace fusec::templates {

struct KirKernel {
  kir::Kernel kernel;
  std::vector<KernelArg> args; ///< one per kir parameter, in order
  std::optional<LaunchConfig> launch;
  std::string schedule; ///< KernelFacts::schedule
};

} // namespace fusec::templates
