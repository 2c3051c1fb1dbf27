#include "runtime/kernel/kernel_context.h"

#include "runtime/platform/log.h"

namespace kiln {

void* KernelContext::allocate_temp(size_t size, size_t alignment) {
  if (temp_ == nullptr) {
    KILN_LOG(Error, "kernel asked for %zu temp bytes but the method has no temp allocator", size);
    return nullptr;
  }
  return temp_->allocate(size, alignment);
}

}  // namespace kiln
