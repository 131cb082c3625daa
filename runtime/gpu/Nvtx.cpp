#include "runtime/gpu/Nvtx.h"

#ifdef FUSEC_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace fusec::nvtx {

#ifdef FUSEC_HAVE_NVTX
namespace {
nvtxDomainHandle_t domain() {
  static nvtxDomainHandle_t d = nvtxDomainCreateA("fusec");
  return d;
}
} // namespace

Range::Range(const std::string &name) {
  nvtxEventAttributes_t a = {};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name.c_str();
  nvtxDomainRangePushEx(domain(), &a);
}

Range::~Range() { nvtxDomainRangePop(domain()); }
#else
Range::Range(const std::string &) {}
Range::~Range() {}
#endif

} // namespace fusec::nvtx
