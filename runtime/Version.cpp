// The library version, from the CMake project version.
#include "include/fusec/fusec.h"

namespace fusec {

const char *version() { return FUSEC_VERSION; }

} // namespace fusec
