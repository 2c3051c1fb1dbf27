// Test kernels and a harness that owns everything a Method needs, sized from MethodMeta.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/core/hierarchical_allocator.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/executor/buffer_data_loader.h"
#include "runtime/executor/method.h"
#include "runtime/executor/program.h"

namespace kiln_test {

/// Registers the test kernels once per process:
///   test::add.out       [a, b, alpha(Int), out, out]   out = a + alpha * b (float)
///   test::fail.out      [...]                           fails with NotSupported
///   test::sum_ints.out  [IntList, out(Long), out]       out[0] = sum of the list
///   test::scratch.out   [out]                           takes 64 temp bytes
void register_test_kernels();

/// Registers aten::copy_ [self, src, non_blocking, out] (float, self = src), the
/// kernel that writes state back, for the suites whose programs have state.
void register_state_write_back_kernel();

/// Loads a built program from its bytes and initializes a method in pools sized exactly
/// from MethodMeta (or smaller, to test failures).
class Harness {
 public:
  explicit Harness(std::vector<uint8_t> bytes);

  kiln::Error load_program(kiln::Program::Verification v = kiln::Program::Verification::Full);
  /// `method_pool_bytes`: SIZE_MAX means MethodMeta::method_allocator_size().
  /// `planned_shrink`: bytes taken off every planned buffer.
  kiln::Error load_method(const char* name = "forward", size_t method_pool_bytes = SIZE_MAX,
                          size_t planned_shrink = 0, size_t temp_bytes = 256);

  /// Added to MethodMeta's size: what backends take in their init comes on top.
  size_t extra_method_bytes = 0;
  /// The byte every planned buffer holds before the method loads (stale memory).
  uint8_t planned_fill = 0;

  kiln::Program& program() { return *program_; }
  kiln::Method& method() { return *method_; }
  kiln::MemoryAllocator& method_allocator() { return *method_allocator_; }
  std::vector<uint8_t>& bytes() { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
  kiln::BufferDataLoader loader_;
  std::optional<kiln::Program> program_;
  std::vector<uint8_t> method_pool_;
  std::optional<kiln::MemoryAllocator> method_allocator_;
  std::vector<std::vector<uint8_t>> planned_storage_;
  std::vector<kiln::Span<uint8_t>> planned_spans_;
  std::optional<kiln::HierarchicalAllocator> planned_;
  std::vector<uint8_t> temp_pool_;
  std::optional<kiln::MemoryAllocator> temp_allocator_;
  kiln::MemoryManager memory_manager_;
  std::optional<kiln::Method> method_;
};

/// 0, 1, ..., n-1.
std::vector<uint8_t> identity_order(size_t n);

/// A float tensor over caller-owned storage (sizes/dim order/strides live inside).
struct FloatTensor {
  FloatTensor(std::vector<int32_t> sizes, std::vector<float> data);
  std::vector<int32_t> sizes;
  std::vector<uint8_t> dim_order;
  std::vector<int32_t> strides;
  std::vector<float> data;
  kiln::Tensor tensor;
};

}  // namespace kiln_test
