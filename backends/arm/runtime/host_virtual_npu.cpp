#include "backends/arm/runtime/host_virtual_npu.h"

#include "backends/arm/runtime/ethos_u_backend.h"

namespace kiln::ethos_u {
namespace {

/// The NpuDriver the backend sees: the host's virtual NPU, one invocation at a time.
class SerializedVirtualNpu final : public NpuDriver {
 public:
  const char* name() const override { return host_virtual_npu_driver().name(); }
  bool is_available() const override { return host_virtual_npu_driver().is_available(); }
  size_t region_alignment() const override { return host_virtual_npu_driver().region_alignment(); }
  Error invoke(const NpuInvocation& invocation, NpuCounters* counters) override {
    std::lock_guard<std::mutex> lock(host_virtual_npu_mutex());
    return host_virtual_npu_driver().invoke(invocation, counters);
  }
};

}  // namespace

std::mutex& host_virtual_npu_mutex() {
  static std::mutex mutex;
  return mutex;
}

VirtualNpuDriver& host_virtual_npu_driver() {
  // Function-local statics: built on first use, never by a static initializer.
  static uint8_t work_memory[vnpu::kRecommendedWorkMemoryBytes];
  static VirtualNpuDriver driver({work_memory, sizeof(work_memory)}, vnpu::Config());
  return driver;
}

Error register_ethos_u_backend_with_virtual_npu() {
  static SerializedVirtualNpu serialized;
  return register_ethos_u_backend(&serialized);
}

}  // namespace kiln::ethos_u
