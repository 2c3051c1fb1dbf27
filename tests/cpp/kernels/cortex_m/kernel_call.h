// Calls one cortex_m:: kernel with hand-made arguments and reports its failure state and
// log lines: for the bad-input tests. Tensors own their storage; data is zero-filled
// unless set.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/evalue.h"
#include "runtime/core/error.h"
#include "runtime/core/tensor.h"

namespace kiln_test {

/// A tensor with its own sizes, dim order, strides and bytes.
struct OwnedTensor {
  OwnedTensor(kiln::ScalarType type, std::vector<int32_t> sizes, std::vector<uint8_t> dim_order = {});
  template <typename T>
  T* data() { return reinterpret_cast<T*>(bytes.data()); }
  std::vector<int32_t> sizes;
  std::vector<uint8_t> dim_order;
  std::vector<int32_t> strides;
  std::vector<uint8_t> bytes;
  std::unique_ptr<kiln::Tensor> tensor;
};

/// int8 activations: NCHW sizes stored channels-last (the cortex_m:: default layout).
OwnedTensor channels_last_int8(int32_t n, int32_t c, int32_t h, int32_t w);
/// A contiguous int8 tensor.
OwnedTensor int8_tensor(std::vector<int32_t> sizes);
/// A 1-D int32 tensor of `count` copies of `value`.
OwnedTensor int32_tensor(size_t count, int32_t value);

/// What the kernel did.
struct KernelOutcome {
  kiln::Error error = kiln::Error::Ok;
  std::string log;  // every log line, newline-separated
};

/// The arguments of one call, in schema order; run() passes the last tensor also as the
/// return value, as the runtime does for an .out overload.
class KernelCall {
 public:
  KernelCall& tensor(OwnedTensor& t);
  KernelCall& none();
  KernelCall& integer(int64_t v);
  KernelCall& real(double v);
  KernelCall& boolean(bool v);
  KernelCall& list(std::vector<int64_t> values);
  /// Replaces argument `index` (for one bad value in an otherwise good call).
  KernelCall& set_integer(size_t index, int64_t v);
  KernelCall& set_list(size_t index, std::vector<int64_t> values);
  KernelCall& set_tensor(size_t index, OwnedTensor& t);
  /// Runs `op`.out with a temp allocator of `temp_bytes`.
  KernelOutcome run(const char* op, size_t temp_bytes = 1 << 16);

 private:
  struct List {
    std::vector<kiln::EValue> items;
    std::vector<kiln::EValue*> pointers;
    std::vector<int64_t> scratch;
  };
  kiln::EValue make_list(std::vector<int64_t> values);
  std::vector<kiln::EValue> values_;
  std::deque<List> lists_;
  kiln::Tensor* last_tensor_ = nullptr;
};

}  // namespace kiln_test
